def forward(x):
    return x
