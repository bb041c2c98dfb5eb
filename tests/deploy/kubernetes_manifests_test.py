"""Structural tests over the rendered Kubernetes manifests (deploy/kubernetes, `kubectl kustomize`).

Every overlay renders; every workload has probes, resources and a securityContext; every Service port names a
container port of the pods it selects and the port the service's config listens on; images are
accelopt/<service>:<git short revision> as `make images` builds them, never `latest`; probes use the named
health statuses; termination grace covers the drain; NetworkPolicies fence the internal services; eks-trn (the
components/tls component) serves TLS everywhere, mutual TLS inside, with exec probes that speak TLS.
"""
import functools
import os
import re
import subprocess
import unittest

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KUBE = os.path.join(ROOT, "deploy", "kubernetes")
OVERLAYS = ["dev", "eks-trn"]
SERVICES = {"orchestrator", "planner", "executor", "memory", "profiler"}
WORKLOAD_KINDS = {"Deployment", "StatefulSet"}


@functools.lru_cache(maxsize=None)
def render_text(overlay):
    return subprocess.run([os.path.join(KUBE, "render.sh"), overlay, "registry.example.com"], check=True,
                          capture_output=True, text=True).stdout


def render(overlay):
    """The rendered documents of `overlay` (a fresh copy each time)."""
    out = render_text(overlay)
    return [d for d in yaml.safe_load_all(out) if d]


def git_short_rev():
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def by_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def config_of(docs, workload):
    """The service YAML config mounted at /etc/accelopt/config.yaml of `workload`."""
    pod = workload["spec"]["template"]["spec"]
    names = [v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v]
    assert len(names) == 1, names
    cm = next(d for d in by_kind(docs, "ConfigMap") if d["metadata"]["name"] == names[0])
    return yaml.safe_load(cm["data"]["config.yaml"])


def probe_target(probe):
    """(port, health service name) a probe checks: a kubelet gRPC probe, or an exec probe running
    `accelopt health --server 127.0.0.1:PORT --service NAME` (TLS listeners)."""
    if "grpc" in probe:
        return probe["grpc"]["port"], probe["grpc"]["service"]
    command = probe["exec"]["command"]
    assert command[:2] == ["/opt/accelopt/bin/accelopt", "health"], command
    options = dict(zip(command[2::2], command[3::2]))
    host, port = options["--server"].rsplit(":", 1)
    assert host == "127.0.0.1", command
    return int(port), options["--service"]


def exec_options(probe):
    command = probe["exec"]["command"]
    return dict(zip(command[2::2], command[3::2]))


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


class RenderedOverlayTest(unittest.TestCase):
    def for_each_overlay(self, check):
        for overlay in OVERLAYS:
            with self.subTest(overlay=overlay):
                check(render(overlay))

    def test_every_workload_has_probes_resources_and_security_context(self):
        def check(docs):
            workloads = [d for d in docs if d["kind"] in WORKLOAD_KINDS]
            self.assertGreaterEqual(len(workloads), 5)
            for w in workloads:
                pod = w["spec"]["template"]["spec"]
                name = w["metadata"]["name"]
                self.assertIn("securityContext", pod, name)
                self.assertTrue(pod["securityContext"].get("runAsNonRoot"), name)
                self.assertIn("seccompProfile", pod["securityContext"], name)
                self.assertFalse(pod.get("automountServiceAccountToken", True), name)
                for c in pod["containers"]:
                    for probe in ("livenessProbe", "readinessProbe"):
                        self.assertIn(probe, c, f"{name}/{c['name']}")
                    ports = {p["containerPort"] for p in c["ports"]}
                    for probe, service in (("livenessProbe", "liveness"), ("readinessProbe", "")):
                        port, checked = probe_target(c[probe])
                        self.assertEqual(checked, service, f"{name} {probe}")
                        self.assertIn(port, ports, f"{name} {probe}")
                    for kind in ("requests", "limits"):
                        self.assertIn("cpu", c["resources"][kind], name)
                        self.assertIn("memory", c["resources"][kind], name)
                    sc = c["securityContext"]
                    self.assertIs(sc["allowPrivilegeEscalation"], False, name)
                    self.assertEqual(sc["capabilities"]["drop"], ["ALL"], name)
                    self.assertTrue(sc.get("readOnlyRootFilesystem"), name)
                    self.assertNotIn("privileged", sc, name)
        self.for_each_overlay(check)

    def test_images_are_make_images_names_at_the_git_revision(self):
        rev = git_short_rev()

        def check(docs):
            for w in [d for d in docs if d["kind"] in WORKLOAD_KINDS]:
                for c in w["spec"]["template"]["spec"]["containers"]:
                    m = re.fullmatch(r"registry\.example\.com/accelopt/([a-z]+):([0-9a-f]{7,40})", c["image"])
                    self.assertIsNotNone(m, c["image"])
                    self.assertIn(m.group(1), SERVICES)
                    self.assertTrue(w["metadata"]["name"].startswith(m.group(1)), (w["metadata"]["name"], c["image"]))
                    self.assertEqual(m.group(2), rev)
                    self.assertNotIn("latest", c["image"])
        self.for_each_overlay(check)

    def test_service_ports_match_container_ports_and_service_configs(self):
        def check(docs):
            workloads = [d for d in docs if d["kind"] in WORKLOAD_KINDS]
            for svc in by_kind(docs, "Service"):
                selector = svc["spec"]["selector"]
                backends = [w for w in workloads if selects(selector, w["spec"]["template"]["metadata"]["labels"])]
                self.assertTrue(backends, f"Service {svc['metadata']['name']} selects no workload")
                for w in backends:
                    container = w["spec"]["template"]["spec"]["containers"][0]
                    named = {p["name"]: p["containerPort"] for p in container["ports"]}
                    config = config_of(docs, w)
                    listens = {"grpc": int(config["server"]["grpc_address"].rsplit(":", 1)[1]),
                               "metrics": int(config["server"]["admin_address"].rsplit(":", 1)[1])}
                    self.assertTrue(config["server"]["grpc_address"].startswith("0.0.0.0:"))
                    for port in svc["spec"]["ports"]:
                        where = f"Service {svc['metadata']['name']} port {port['name']} -> {w['metadata']['name']}"
                        self.assertIn(port["targetPort"], named, where)
                        self.assertEqual(named[port["targetPort"]], listens[port["targetPort"]], where)
                        if port["name"] == "grpc":
                            self.assertEqual(port["port"], listens["grpc"], where)
        self.for_each_overlay(check)

    def test_orchestrator_reaches_the_services_at_their_service_ports(self):
        def check(docs):
            orch = next(d for d in by_kind(docs, "StatefulSet") if d["metadata"]["name"] == "orchestrator")
            config = config_of(docs, orch)
            ports = {s["metadata"]["name"]: s["spec"]["ports"][0]["port"] for s in by_kind(docs, "Service")}
            for field, service in (("planner_address", "planner"), ("executor_address", "executor"),
                                   ("memory_address", "memory"), ("profiler_dns", "profilers")):
                host, port = config[field].rsplit(":", 1)
                self.assertEqual(host, f"{service}.accelopt.svc.cluster.local", field)
                self.assertEqual(int(port), ports[service], field)
            headless = {s["metadata"]["name"] for s in by_kind(docs, "Service") if s["spec"].get("clusterIP") == "None"}
            self.assertTrue({"planner", "executor", "memory", "profilers"} <= headless, headless)
        self.for_each_overlay(check)

    def test_stores_are_single_replica_statefulsets_with_volumes(self):
        def check(docs):
            sets = {d["metadata"]["name"]: d for d in by_kind(docs, "StatefulSet")}
            self.assertEqual(set(sets), {"orchestrator", "memory"})
            for name, s in sets.items():
                self.assertEqual(s["spec"]["replicas"], 1, name)
                claim = s["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
                mounts = {m["name"]: m["mountPath"] for m in s["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]}
                self.assertEqual(mounts[claim], config_of(docs, s)["data_dir"], name)
        self.for_each_overlay(check)

    def test_termination_grace_covers_the_drain(self):
        def check(docs):
            for w in [d for d in docs if d["kind"] in WORKLOAD_KINDS]:
                drain = config_of(docs, w)["server"]["drain_seconds"]
                grace = w["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
                self.assertGreaterEqual(grace, drain, w["metadata"]["name"])
                self.assertLessEqual(grace, drain + 30, w["metadata"]["name"])
        self.for_each_overlay(check)

    def test_every_workload_has_a_disruption_budget(self):
        def check(docs):
            budgets = [d["spec"]["selector"]["matchLabels"] for d in by_kind(docs, "PodDisruptionBudget")]
            for w in [d for d in docs if d["kind"] in WORKLOAD_KINDS]:
                labels = w["spec"]["template"]["metadata"]["labels"]
                self.assertTrue(any(selects(b, labels) for b in budgets), w["metadata"]["name"])
        self.for_each_overlay(check)

    def test_network_policies_fence_internal_services_and_profilers(self):
        def check(docs):
            policies = {d["metadata"]["name"]: d["spec"] for d in by_kind(docs, "NetworkPolicy")}
            self.assertEqual(policies["default-deny"]["podSelector"], {})
            self.assertEqual(policies["profiler"]["egress"], [])
            for name in ("internal", "profiler"):
                grpc_rules = [r for r in policies[name]["ingress"] if all(p["port"] != 9090 for p in r["ports"])]
                for rule in grpc_rules:
                    self.assertEqual(rule["from"], [{"podSelector": {"matchLabels": {"accelopt.io/role": "orchestrator"}}}])
            roles = {w["spec"]["template"]["metadata"]["labels"].get("accelopt.io/role")
                     for w in docs if w["kind"] in WORKLOAD_KINDS}
            self.assertEqual(roles, {"orchestrator", "internal", "profiler"})
        self.for_each_overlay(check)

    def test_eks_trn_runs_neuron_profilers_on_trainium_nodes(self):
        docs = render("eks-trn")
        neuron = next(d for d in by_kind(docs, "Deployment") if d["metadata"]["name"] == "profiler-neuron")
        pod = neuron["spec"]["template"]["spec"]
        self.assertEqual(pod["containers"][0]["resources"]["limits"]["aws.amazon.com/neuron"], "1")
        self.assertIn("aws.amazon.com/neuron", [t["key"] for t in pod["tolerations"]])
        types = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
        self.assertTrue(any(v.startswith("trn") for v in types["matchExpressions"][0]["values"]))
        self.assertEqual(config_of(docs, neuron)["device"], "neuron")
        sim = next(d for d in by_kind(docs, "Deployment") if d["metadata"]["name"] == "profiler")
        self.assertEqual(config_of(docs, sim)["device"], "sim-trn1")

    def test_eks_trn_serves_tls_everywhere_with_mutual_tls_inside_and_tls_probes(self):
        docs = render("eks-trn")
        services = by_kind(docs, "Service")
        orch_config = None
        for w in [d for d in docs if d["kind"] in WORKLOAD_KINDS]:
            name = w["metadata"]["name"]
            pod = w["spec"]["template"]["spec"]
            config = config_of(docs, w)
            server = config["server"]
            self.assertNotIn("insecure", server, name)
            tls = server["tls"]
            mounts = {m["name"]: m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
            secrets = {v["name"]: v["secret"] for v in pod["volumes"] if "secret" in v}
            self.assertFalse(secrets["tls"].get("optional", False), name)  # a missing Secret fails the pod, loudly
            for key in ("cert_file", "key_file", "ca_file"):
                self.assertTrue(tls[key].startswith(mounts["tls"] + "/"), (name, key))
            labels = w["spec"]["template"]["metadata"]["labels"]
            dns = {f"{svc['metadata']['name']}.accelopt.svc.cluster.local" for svc in services
                   if selects(svc["spec"]["selector"], labels)}
            grpc_port = int(server["grpc_address"].rsplit(":", 1)[1])
            for probe in ("livenessProbe", "readinessProbe"):
                options = exec_options(pod["containers"][0][probe])
                self.assertEqual(options["--server"], f"127.0.0.1:{grpc_port}", name)
                self.assertIn(options["--tls-server-name"], dns, name)
                for flag, key in (("--ca", "ca_file"), ("--cert", "cert_file"), ("--key", "key_file")):
                    self.assertEqual(options[flag], tls[key], name)
            if name == "orchestrator":
                orch_config = config
                self.assertEqual(secrets["tls"]["secretName"], "accelopt-tls-orchestrator")
                self.assertFalse(tls.get("require_client_cert", False))  # people come with tokens
                self.assertTrue(server["auth"]["token_file"].startswith(mounts["auth"] + "/"))
            else:
                self.assertEqual(secrets["tls"]["secretName"], "accelopt-tls", name)
                grants = {g["identity"]: g["role"] for g in server["auth"].get("identities", [])}
                self.assertEqual(grants, {"orchestrator.accelopt.svc.cluster.local": "internal"}, name)
                if not name.startswith("memory"):
                    self.assertTrue(tls["require_client_cert"], name)
        self.assertIsNotNone(orch_config)
        self.assertEqual(set(orch_config["client_tls"]), {"cert_file", "key_file", "ca_file"})

    def test_dev_runs_one_simulator_profiler(self):
        docs = render("dev")
        profilers = [d for d in by_kind(docs, "Deployment") if d["metadata"]["name"].startswith("profiler")]
        self.assertEqual([(p["metadata"]["name"], p["spec"]["replicas"]) for p in profilers], [("profiler", 1)])


if __name__ == "__main__":
    unittest.main()
