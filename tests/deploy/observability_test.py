"""Checks of deploy/observability: every PromQL expression of the Grafana dashboard and the alert rules
parses (promtool), names only metrics the services register, and the PrometheusRule and PodMonitor agree with
the rule file and the rendered Kubernetes manifests.
"""
import glob
import json
import os
import re
import subprocess
import tempfile
import unittest

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OBS = os.path.join(ROOT, "deploy", "observability")
# Series every Prometheus target has, and the standard process/build metrics the RPC library exports.
BUILTIN = {"up"}


def load_yaml(*parts):
    with open(os.path.join(OBS, *parts)) as f:
        return yaml.safe_load(f)


def dashboard_exprs():
    with open(os.path.join(OBS, "grafana", "accelopt-dashboard.json")) as f:
        dashboard = json.load(f)
    return [(p["title"], t["expr"]) for p in dashboard["panels"] for t in p["targets"]]


def alert_exprs():
    groups = load_yaml("prometheus", "accelopt-rules.yml")["groups"]
    return [(r["alert"], r["expr"]) for g in groups for r in g["rules"]]


def registered_metric_names():
    """Metric family names registered in the C++ sources (prometheus-cpp `.Name("...")`)."""
    names = set()
    for path in glob.glob(os.path.join(ROOT, "libs", "**", "*.cc"), recursive=True) + \
            glob.glob(os.path.join(ROOT, "services", "**", "*.cc"), recursive=True):
        if path.endswith("_test.cc"):
            continue
        with open(path) as f:
            names.update(re.findall(r'\.Name\("([a-z_:]+)"\)', f.read()))
    return names


def metric_names_in(expr):
    """Metric names in a PromQL expression: identifiers followed by `{` or `[` or a space/paren that are not
    functions, keywords or label names."""
    expr = re.sub(r'"[^"]*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", "{}", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    words = set(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", expr))
    keywords = {"and", "or", "unless", "bool", "offset", "le"}
    return {w for w in words if w not in keywords and not re.fullmatch(r"\d+[smhdwy]?", w) and "_" in w or w == "up"}


class ObservabilityTest(unittest.TestCase):
    def test_every_expression_parses(self):
        exprs = dashboard_exprs() + alert_exprs()
        rules = {"groups": [{"name": "all", "rules": [
            {"record": f"check:expr_{i}", "expr": e} for i, (_, e) in enumerate(exprs)]}]}
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            yaml.safe_dump(rules, f)
        try:
            result = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        finally:
            os.unlink(f.name)

    def test_expressions_name_only_registered_metrics(self):
        known = registered_metric_names() | BUILTIN
        self.assertIn("accelopt_jobs_finished_total", known)
        for where, expr in dashboard_exprs() + alert_exprs():
            names = {re.sub(r"_(bucket|sum|count)$", "", n) for n in metric_names_in(expr)}
            self.assertTrue(names, (where, expr))
            self.assertLessEqual(names, known, f"{where}: {expr}")

    def test_dashboard_has_the_required_panels(self):
        titles = " | ".join(t for t, _ in dashboard_exprs()).lower()
        for needle in ("jobs by state", "pool utilization", "verdict", "llm latency", "llm tokens", "llm cost",
                       "best speedup per job", "iteration duration"):
            self.assertIn(needle, titles)

    def test_every_alert_has_a_unit_test(self):
        tests = load_yaml("prometheus", "accelopt-rules.test.yml")["tests"]
        tested = {a["alertname"] for t in tests for a in t["alert_rule_test"] if a["exp_alerts"]}
        self.assertEqual(tested, {name for name, _ in alert_exprs()})

    def test_prometheus_rule_carries_the_rule_file(self):
        rule = load_yaml("kubernetes", "prometheus-rule.yaml")
        self.assertEqual(rule["kind"], "PrometheusRule")
        self.assertEqual(rule["spec"]["groups"], load_yaml("prometheus", "accelopt-rules.yml")["groups"])

    def test_scrape_configs_use_the_pods_metrics_port_and_app_name_as_job(self):
        monitor = load_yaml("kubernetes", "pod-monitor.yaml")
        self.assertEqual(monitor["spec"]["jobLabel"], "app.kubernetes.io/name")
        self.assertEqual([e["port"] for e in monitor["spec"]["podMetricsEndpoints"]], ["metrics"])
        scrape = load_yaml("prometheus", "prometheus.yml")["scrape_configs"][0]
        relabel = {tuple(r["source_labels"]): r for r in scrape["relabel_configs"]}
        self.assertEqual(relabel[("__meta_kubernetes_pod_container_port_name",)]["regex"], "metrics")
        self.assertEqual(relabel[("__meta_kubernetes_pod_label_app_kubernetes_io_name",)]["target_label"], "job")
        rendered = subprocess.run(["kubectl", "kustomize", os.path.join(ROOT, "deploy", "kubernetes", "overlays", "dev")],
                                  check=True, capture_output=True, text=True).stdout
        for doc in yaml.safe_load_all(rendered):
            if doc and doc["kind"] in ("Deployment", "StatefulSet"):
                labels = doc["spec"]["template"]["metadata"]["labels"]
                self.assertEqual(labels.get("app.kubernetes.io/part-of"), "accelopt")
                ports = [p["name"] for p in doc["spec"]["template"]["spec"]["containers"][0]["ports"]]
                self.assertIn("metrics", ports)

    def test_scrape_config_passes_promtool_with_its_discovery_stood_in_for(self):
        # Debian's promtool is built without Kubernetes service discovery: check everything else of the file
        # with promtool, the kubernetes_sd_configs block itself by structure.
        config = load_yaml("prometheus", "prometheus.yml")
        scrape = config["scrape_configs"][0]
        self.assertEqual(scrape["kubernetes_sd_configs"], [{"role": "pod", "namespaces": {"names": ["accelopt"]}}])
        with tempfile.TemporaryDirectory() as tmp:
            del scrape["kubernetes_sd_configs"]
            scrape["static_configs"] = [{"targets": ["127.0.0.1:9090"]}]
            ca = os.path.join(tmp, "ca.crt")
            with open(ca, "w") as f:
                f.write("placeholder\n")
            scrape["tls_config"]["ca_file"] = ca
            config["rule_files"] = [os.path.join(OBS, "prometheus", name) for name in config["rule_files"]]
            path = os.path.join(tmp, "prometheus.yml")
            with open(path, "w") as f:
                yaml.safe_dump(config, f)
            result = subprocess.run(["promtool", "check", "config", path], capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_tls_pods_are_scraped_over_https_and_plain_pods_over_http(self):
        scrape = load_yaml("prometheus", "prometheus.yml")["scrape_configs"][0]
        scheme = [r for r in scrape["relabel_configs"] if r.get("target_label") == "__scheme__"]
        self.assertEqual(scheme, [{"source_labels": ["__meta_kubernetes_pod_label_accelopt_io_metrics_scheme"],
                                   "regex": "(https)", "target_label": "__scheme__"}])
        endpoint = load_yaml("kubernetes", "pod-monitor.yaml")["spec"]["podMetricsEndpoints"][0]
        self.assertEqual(endpoint["relabelings"][0]["targetLabel"], "__scheme__")
        self.assertEqual(endpoint["tlsConfig"]["serverName"], scrape["tls_config"]["server_name"])
        render = os.path.join(ROOT, "deploy", "kubernetes", "render.sh")
        for overlay, expected in (("dev", None), ("eks-trn", "https")):
            out = subprocess.run([render, overlay], check=True, capture_output=True, text=True).stdout
            for doc in yaml.safe_load_all(out):
                if doc and doc["kind"] in ("Deployment", "StatefulSet"):
                    labels = doc["spec"]["template"]["metadata"]["labels"]
                    self.assertEqual(labels.get("accelopt.io/metrics-scheme"), expected,
                                     (overlay, doc["metadata"]["name"]))

    def test_observability_kustomization_renders(self):
        out = subprocess.run(["kubectl", "kustomize", OBS], check=True, capture_output=True, text=True).stdout
        kinds = sorted(d["kind"] for d in yaml.safe_load_all(out) if d)
        self.assertEqual(kinds, ["ConfigMap", "PodMonitor", "PrometheusRule"])


if __name__ == "__main__":
    unittest.main()
