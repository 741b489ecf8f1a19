"""The project's rules for deploy/kubernetes/, beyond the schema (run by run.sh with kubernetes-validate's PyYAML),
for one variant at a time: base/ + sidecar/ or base/ + cache-deployment/, each with monitoring/.

- every container states CPU and memory requests and limits;
- Deployment selectors match their Pod labels; every Service and ServiceMonitor selects something and names a
  port that exists; every Deployment of more than one replica has a PodDisruptionBudget;
- ConfigMaps and Secrets referenced are defined here or listed in EXTERNAL (created by hand, README);
- no Secret carries a value: a usable default secret must not exist;
- the concert-cache container runs the image compose.yaml names, on ports 8080 and 8081, probes the management
  port (startup, liveness, readiness), has a preStop within the Pod's grace period and Redis' password from the
  Secret; beside an application it is a native sidecar (an init container with restartPolicy Always);
- Redis runs the repository's redis/redis.conf, held verbatim by the ConfigMap concert-cache-redis, with only the
  listening address and the password file added; a NetworkPolicy admits only Pods that run the cache.
"""
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]


class ComposeLoader(yaml.SafeLoader):
    """compose.yaml's own tags (`!reset`, `!override`) read as their plain values."""


for _tag in ("!reset", "!override"):
    ComposeLoader.add_constructor(_tag, lambda loader, node: (
        loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode)
        else loader.construct_mapping(node) if isinstance(node, yaml.MappingNode)
        else loader.construct_scalar(node)))

# Created by hand, never committed (deploy/kubernetes/README.md).
EXTERNAL = {("Secret", "concert-cache"), ("ConfigMap", "ticketing-app-script")}
# The label of Pods that run the cache: the only ones Redis admits.
CACHE_LABEL = ("concert-cache.dev/cache", "true")
REDIS_CONFIG_MAP = "concert-cache-redis"
# What the command line may add to redis.conf: where to listen (redis.conf says loopback) and the password file.
REDIS_ALLOWED_ARGS = {"--bind", "--include"}


def main(paths):
    docs = [d for p in paths for d in yaml.safe_load_all(open(p)) if d]
    defined = {(d["kind"], d["metadata"]["name"]) for d in docs} | EXTERNAL
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    services = [d for d in docs if d["kind"] == "Service"]
    problems = []

    for d in docs:
        if d["kind"] == "Secret" and (d.get("data") or d.get("stringData")):
            problems.append(f"Secret {d['metadata']['name']} carries values; create it by hand instead")

    for d in deployments:
        name = d["metadata"]["name"]
        pod = d["spec"]["template"]
        labels = pod["metadata"].get("labels", {})
        if not d["spec"]["selector"]["matchLabels"].items() <= labels.items():
            problems.append(f"Deployment {name}: selector does not match the Pod labels")
        if d["spec"].get("replicas", 1) > 1 and not any(
                p["kind"] == "PodDisruptionBudget" and p["spec"]["selector"]["matchLabels"].items() <= labels.items()
                for p in docs):
            problems.append(f"Deployment {name}: {d['spec']['replicas']} replicas and no PodDisruptionBudget")
        spec = pod["spec"]
        for c in containers(spec):
            where = f"Deployment {name}, container {c['name']}"
            resources = c.get("resources", {})
            for kind in ("requests", "limits"):
                for resource in ("cpu", "memory"):
                    if resource not in resources.get(kind, {}):
                        problems.append(f"{where}: no {resource} in resources.{kind}")
            for ref in references(c, spec):
                if ref not in defined:
                    problems.append(f"{where}: {ref[0]} {ref[1]} is neither defined here nor in EXTERNAL")
            if c["name"] == "concert-cache":
                problems += concert_cache_container(where, c, spec, labels)
            if c["name"] == "redis":
                problems += redis_container(where, c, spec, docs, labels)

    for s in services:
        name = s["metadata"]["name"]
        pods = [d["spec"]["template"]["spec"] for d in deployments
                if s["spec"]["selector"].items() <= d["spec"]["template"]["metadata"].get("labels", {}).items()]
        if not pods:
            problems.append(f"Service {name}: its selector matches no Deployment's Pods")
            continue
        ports = [p for pod in pods for c in containers(pod) for p in c.get("ports", [])]
        declared = {p.get("name") for p in ports} | {p["containerPort"] for p in ports}
        for port in s["spec"]["ports"]:
            if port.get("targetPort", port["port"]) not in declared:
                problems.append(f"Service {name}: targetPort {port.get('targetPort')} is not a container port")

    for m in (d for d in docs if d["kind"] == "ServiceMonitor"):
        selected = [s for s in services
                    if m["spec"]["selector"]["matchLabels"].items() <= s["metadata"].get("labels", {}).items()]
        if not selected:
            problems.append(f"ServiceMonitor {m['metadata']['name']}: its selector matches no Service")
        for endpoint in m["spec"]["endpoints"]:
            if not any(endpoint["port"] in {p.get("name") for p in s["spec"]["ports"]} for s in selected):
                problems.append(f"ServiceMonitor {m['metadata']['name']}: no selected Service has port "
                                f"{endpoint['port']}")

    for p in problems:
        print("  FAIL " + p, file=sys.stderr)
    return 1 if problems else 0


def containers(pod_spec):
    return pod_spec.get("initContainers", []) + pod_spec["containers"]


def references(container, pod_spec):
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            yield ("ConfigMap", source["configMapRef"]["name"])
        if "secretRef" in source:
            yield ("Secret", source["secretRef"]["name"])
    for env in container.get("env", []):
        ref = env.get("valueFrom", {})
        if "secretKeyRef" in ref:
            yield ("Secret", ref["secretKeyRef"]["name"])
        if "configMapKeyRef" in ref:
            yield ("ConfigMap", ref["configMapKeyRef"]["name"])
    mounted = {m["name"] for m in container.get("volumeMounts", [])}
    for volume in pod_spec.get("volumes", []):
        if volume["name"] in mounted and "configMap" in volume:
            yield ("ConfigMap", volume["configMap"]["name"])
        if volume["name"] in mounted and "secret" in volume:
            yield ("Secret", volume["secret"]["secretName"])


def concert_cache_container(where, c, pod_spec, labels):
    problems = []
    compose = yaml.load(open(ROOT / "compose.yaml"), Loader=ComposeLoader)
    if c["image"] != compose["x-api-image"]["image"]:
        problems.append(f"{where}: image {c['image']} is not compose.yaml's {compose['x-api-image']['image']}")
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    if ports != {"http": 8080, "management": 8081}:
        problems.append(f"{where}: ports {ports}, expected http 8080 and management 8081")
    for probe, paths in (("startupProbe", ("/actuator/health/liveness", "/actuator/health/readiness")),
                         ("livenessProbe", ("/actuator/health/liveness",)),
                         ("readinessProbe", ("/actuator/health/readiness",))):
        get = c.get(probe, {}).get("httpGet", {})
        if get.get("path") not in paths or ports.get(get.get("port"), get.get("port")) != 8081:
            problems.append(f"{where}: {probe} is not GET {' or '.join(paths)} on the management port 8081")
    secrets = {e["name"] for e in c.get("env", []) if "secretKeyRef" in e.get("valueFrom", {})}
    for name in ("SPRING_DATA_REDIS_PASSWORD", "CONCERT_CACHE_ADMIN_TOKEN", "CONCERT_CACHE_CURSOR_SECRET"):
        if name not in secrets:
            problems.append(f"{where}: {name} does not come from a Secret")
    pre_stop = c.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds")
    grace = pod_spec.get("terminationGracePeriodSeconds", 30)
    # Boot's graceful shutdown takes up to 30 s (spring.lifecycle.timeout-per-shutdown-phase) after the preStop.
    if not pre_stop:
        problems.append(f"{where}: no preStop sleep: requests still routed here meet a closed port")
    elif grace < pre_stop + 30:
        problems.append(f"{where}: terminationGracePeriodSeconds {grace} < preStop {pre_stop} s + 30 s of shutdown")
    sidecar = c in pod_spec.get("initContainers", [])
    if pod_spec["containers"] != [c] and not (sidecar and c.get("restartPolicy") == "Always"):
        problems.append(f"{where}: beside an application, the cache is a native sidecar (initContainers, "
                        "restartPolicy: Always): started and ready before it, stopped after it")
    if labels.get(CACHE_LABEL[0]) != CACHE_LABEL[1]:
        problems.append(f"{where}: the Pod lacks the label {CACHE_LABEL[0]}: \"{CACHE_LABEL[1]}\"; Redis refuses it")
    return problems


def redis_container(where, c, pod_spec, docs, labels):
    problems = []
    config_maps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    shipped = config_maps.get(REDIS_CONFIG_MAP, {}).get("data", {}).get("redis.conf")
    if shipped != (ROOT / "redis" / "redis.conf").read_text():
        problems.append(f"{where}: ConfigMap {REDIS_CONFIG_MAP}'s redis.conf differs from redis/redis.conf "
                        "(copy the file into its data, every line indented by four spaces)")
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    mounted = [m["mountPath"] for m in c.get("volumeMounts", [])
               if volumes.get(m["name"], {}).get("configMap", {}).get("name") == REDIS_CONFIG_MAP]
    command = c.get("command", []) + c.get("args", [])
    if not mounted or command[:2] != ["redis-server", mounted[0].rstrip("/") + "/redis.conf"]:
        problems.append(f"{where}: does not run redis-server with the ConfigMap's redis.conf (command {command})")
    else:
        options = [a for a in command[2:] if a.startswith("--")]
        if set(options) - REDIS_ALLOWED_ARGS:
            problems.append(f"{where}: the command line overrides redis.conf: {sorted(set(options) - REDIS_ALLOWED_ARGS)}")
        if "--include" not in options:
            problems.append(f"{where}: no password (--include of the file that sets requirepass)")
    policies = [d for d in docs if d["kind"] == "NetworkPolicy"
                and d["spec"]["podSelector"].get("matchLabels", {}).items() <= labels.items()]
    redis_port = {p["containerPort"] for p in c["ports"]} | {p.get("name") for p in c["ports"]}
    if not policies:
        problems.append(f"{where}: no NetworkPolicy selects the Redis Pods")
    for policy in policies:
        for rule in policy["spec"].get("ingress", []):
            if not {p.get("port") for p in rule.get("ports", [])} & redis_port:
                continue
            for peer in rule.get("from", []):
                if peer.get("podSelector", {}).get("matchLabels") != dict([CACHE_LABEL]) or "namespaceSelector" in peer:
                    problems.append(f"NetworkPolicy {policy['metadata']['name']}: Redis' port admits {peer}, "
                                    "not only Pods that run the cache")
    return problems


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
