import numpy as np

def forward(x):
    return x / (1 + np.exp(-x))
