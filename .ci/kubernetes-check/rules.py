"""The project's rules for deploy/kubernetes/, beyond the schema (run by run.sh with kubernetes-validate's PyYAML).

- every container states CPU and memory requests and limits;
- Deployment selectors match their Pod labels, and every Service selects a Deployment's Pods and targets a
  port one of its containers declares;
- ConfigMaps and Secrets referenced are defined here or listed in EXTERNAL (created by hand, README);
- no Secret carries a value: a usable default secret must not exist;
- the concert-cache container runs the image compose.yaml names, on ports 8080 and 8081, and probes the
  management port's liveness and readiness groups (api/Dockerfile, application.yml).
"""
import sys

import yaml



class ComposeLoader(yaml.SafeLoader):
    """compose.yaml's own tags (`!reset`, `!override`) read as their plain values."""


for _tag in ("!reset", "!override"):
    ComposeLoader.add_constructor(_tag, lambda loader, node: (
        loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode)
        else loader.construct_mapping(node) if isinstance(node, yaml.MappingNode)
        else loader.construct_scalar(node)))

# Created by hand, never committed (deploy/kubernetes/README.md).
EXTERNAL = {("Secret", "concert-cache"), ("ConfigMap", "ticketing-app-script")}


def main(paths):
    docs = [d for p in paths for d in yaml.safe_load_all(open(p)) if d]
    defined = {(d["kind"], d["metadata"]["name"]) for d in docs} | EXTERNAL
    deployments = [d for d in docs if d["kind"] == "Deployment"]
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
        for c in pod["spec"]["containers"]:
            where = f"Deployment {name}, container {c['name']}"
            resources = c.get("resources", {})
            for kind in ("requests", "limits"):
                for resource in ("cpu", "memory"):
                    if resource not in resources.get(kind, {}):
                        problems.append(f"{where}: no {resource} in resources.{kind}")
            for ref in references(c, pod["spec"]):
                if ref not in defined:
                    problems.append(f"{where}: {ref[0]} {ref[1]} is neither defined here nor in EXTERNAL")
            if c["name"] == "concert-cache":
                problems += concert_cache_container(where, c)

    for s in (d for d in docs if d["kind"] == "Service"):
        name = s["metadata"]["name"]
        pods = [d["spec"]["template"]["spec"] for d in deployments
                if s["spec"]["selector"].items() <= d["spec"]["template"]["metadata"].get("labels", {}).items()]
        if not pods:
            problems.append(f"Service {name}: its selector matches no Deployment's Pods")
            continue
        declared = {p.get("name") for pod in pods for c in pod["containers"] for p in c.get("ports", [])} | {
            p["containerPort"] for pod in pods for c in pod["containers"] for p in c.get("ports", [])}
        for port in s["spec"]["ports"]:
            if port.get("targetPort", port["port"]) not in declared:
                problems.append(f"Service {name}: targetPort {port.get('targetPort')} is not a container port")

    for p in problems:
        print("  FAIL " + p, file=sys.stderr)
    return 1 if problems else 0


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


def concert_cache_container(where, c):
    problems = []
    compose = yaml.load(open("compose.yaml"), Loader=ComposeLoader)
    if c["image"] != compose["x-api-image"]["image"]:
        problems.append(f"{where}: image {c['image']} is not compose.yaml's {compose['x-api-image']['image']}")
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    if ports != {"http": 8080, "management": 8081}:
        problems.append(f"{where}: ports {ports}, expected http 8080 and management 8081")
    for probe, path in (("livenessProbe", "/actuator/health/liveness"),
                        ("readinessProbe", "/actuator/health/readiness")):
        get = c.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or ports.get(get.get("port"), get.get("port")) != 8081:
            problems.append(f"{where}: {probe} is not GET {path} on the management port 8081")
    return problems


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
