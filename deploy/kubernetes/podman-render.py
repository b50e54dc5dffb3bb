#!/usr/bin/python3
"""Renders a deploy/kubernetes manifest for `podman kube play` (podman 4.3, Debian 12), as scripts/image runs it.

    podman-render.py MANIFEST SECRETS_DIR OUT_DIR [--balancer DEPLOYMENT=HOSTPORT] [--service SERVICE=DEPLOYMENT]...
                     [--set CONFIGMAP.KEY=VALUE]...

Writes OUT_DIR/<n>-<Deployment>.yaml, one file per Deployment with the ConfigMaps and PVCs it uses, in the
manifest's order (scripts/image plays them one by one and waits for each). What podman 4.3 cannot do, and what
this does instead (docs/deploy.md, "What podman kube play changes"):
  * Service, NetworkPolicy, Secret: not supported by kube play; dropped. Pods reach each other by pod name on
    the podman network (aardvark-dns), so a Service name in a ConfigMap or variable is replaced by the first
    pod of its Deployment (`--service NAME=DEPLOYMENT`), and the balancer's `# @REPLICAS@` upstream line by one
    line per replica pod.
  * Secret volumes: podman 4.3 writes the base64 text, not the decoded bytes (seen here); replaced by hostPath
    directories SECRETS_DIR/<secretName>/ holding the files (written by scripts/image, mode 0440, the pod's group).
  * env secretKeyRef: replaced by the value from SECRETS_DIR/<secretName>/<key>.
  * containerPort without hostPort: podman publishes it on the host's same port (so two replicas collide);
    dropped, except the balancer's, published on 127.0.0.1:HOSTPORT (its next ports on HOSTPORT+1, …).
  * emptyDir: podman 4.3 makes it a named volume of the volume's name, shared by every pod naming it; renamed
    <Deployment>-<volume> (still shared by the replicas of one Deployment).
  * --set NAME=VALUE: a ConfigMap key changed for the test (e.g. the rate limits).
"""
import argparse
import os
import re
import sys

import yaml

parser = argparse.ArgumentParser()
parser.add_argument("manifest")
parser.add_argument("secrets")
parser.add_argument("out")
parser.add_argument("--balancer", action="append", default=[], help="DEPLOYMENT=HOSTPORT: published on 127.0.0.1")
parser.add_argument("--set", action="append", default=[], help="CONFIGMAP.KEY=VALUE")
parser.add_argument("--service", action="append", default=[], help="SERVICE=DEPLOYMENT")
args = parser.parse_args()

documents = [d for d in yaml.safe_load_all(open(args.manifest)) if d]
config_maps = {d["metadata"]["name"]: d for d in documents if d["kind"] == "ConfigMap"}
claims = {d["metadata"]["name"]: d for d in documents if d["kind"] == "PersistentVolumeClaim"}
deployments = [d for d in documents if d["kind"] == "Deployment"]
replicas = {d["metadata"]["name"]: d["spec"].get("replicas", 1) for d in deployments}
balancers = dict(item.split("=", 1) for item in args.balancer)
services = dict(item.split("=", 1) for item in args.service)


def pod_names(deployment):
    return [f"{deployment}-pod-{i}" for i in range(replicas[deployment])]


def replace_services(text):
    for service, deployment in services.items():
        text = re.sub(rf"(?<![\w.-]){re.escape(service)}(?![\w-])", pod_names(deployment)[0], text)
    return text


for item in args.set:
    target, value = item.split("=", 1)
    name, key = target.rsplit(".", 1)
    config_maps[name]["data"][key] = value
for config_map in config_maps.values():
    for key, text in config_map.get("data", {}).items():
        lines = []
        for line in text.splitlines():
            match = re.match(r"(\s*)server (\S+?):(\d+) (.*?)\s*# @REPLICAS@$", line)
            if match:
                indent, service, port, options = match.groups()
                lines += [f"{indent}server {pod}:{port} {options}" for pod in pod_names(services[service])]
            else:
                lines.append(line)
        config_map["data"][key] = replace_services("\n".join(lines) + ("\n" if text.endswith("\n") else ""))


def secret_value(name, key):
    with open(os.path.join(args.secrets, name, key)) as handle:
        return handle.read().strip()


os.makedirs(args.out, exist_ok=True)
for index, deployment in enumerate(deployments):
    name = deployment["metadata"]["name"]
    spec = deployment["spec"]["template"]["spec"]
    used_maps, used_claims = set(), set()
    for volume in spec.get("volumes", []):
        if "secret" in volume:
            secret = volume.pop("secret")
            volume["hostPath"] = {"path": os.path.join(os.path.abspath(args.secrets), secret["secretName"]), "type": "Directory"}
        elif "configMap" in volume:
            used_maps.add(volume["configMap"]["name"])
        elif "persistentVolumeClaim" in volume:
            used_claims.add(volume["persistentVolumeClaim"]["claimName"])
        elif "emptyDir" in volume:
            # podman 4.3 makes an emptyDir a named volume of the volume's name, shared by every pod that names it:
            # at least not across Deployments (the nodes on PostgreSQL write nothing to /data).
            renamed = f"{name}-{volume['name']}"
            for container in spec["containers"]:
                for mount in container.get("volumeMounts", []):
                    if mount["name"] == volume["name"]:
                        mount["name"] = renamed
            volume["name"] = renamed
    for container in spec["containers"]:
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                used_maps.add(source["configMapRef"]["name"])
        for variable in container.get("env", []):
            reference = variable.get("valueFrom", {}).get("secretKeyRef")
            if reference:
                del variable["valueFrom"]
                variable["value"] = replace_services(secret_value(reference["name"], reference["key"]))
        if name in balancers:
            for offset, port in enumerate(container.get("ports", [])):
                port["hostPort"] = int(balancers[name]) + offset
                port["hostIP"] = "127.0.0.1"
        else:
            container.pop("ports", None)
    out = [config_maps[m] for m in sorted(used_maps)] + [claims[c] for c in sorted(used_claims)] + [deployment]
    path = os.path.join(args.out, f"{index}-{name}.yaml")
    with open(path, "w") as handle:
        yaml.safe_dump_all(out, handle, sort_keys=False)
    print(path, " ".join(pod_names(name)))
