"""Checks svcgate's deployment files against each other and against svcgate itself; run by deploy/check.sh.

Usage: check.py REPO SVCGATE_BINARY

Schema validation (kubernetes-validate), hadolint and `systemd-analyze verify` are run by check.sh; this script
checks what no linter knows: that the numbers in the files agree (drain times, ports, user ids, paths), and that
svcgate accepts each file's configuration by starting the built binary with it, as the container, a Kubernetes
pod or the systemd unit would, and asking it for /-/svcgate/health and /-/svcgate/ready. Every process it starts
runs in a temporary directory on loopback and is stopped by its process id. Any problem is printed and makes
the exit status 1.
"""

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import yaml

# Seconds allowed after the drain for svcgate to flush its usage counts and close its store before SIGKILL.
EXIT_MARGIN = 5
# Most seconds a started svcgate may take to answer, and to exit after SIGTERM.
START_TIMEOUT = 20
STOP_TIMEOUT = 20
HEALTH = "/-/svcgate/health"
READY = "/-/svcgate/ready"

problems = []


def problem(where, message):
    problems.append(f"{where}: {message}")


def seconds(text):
    """A duration as svcgate writes them (`30s`, `500ms`, `2m`), in seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(text))
    if not match:
        raise ValueError(f"not a duration: {text!r}")
    value = float(match.group(1))
    return value * {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600}[match.group(2)]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def start_and_probe(where, argv, env, user=None, data_dir=None):
    """Starts svcgate with `argv` and `env`, waits for health, checks readiness, stops it with SIGTERM."""
    port = int(env["SVCGATE_LISTEN"].rsplit(":", 1)[1])
    base = f"http://127.0.0.1:{port}"
    log = tempfile.TemporaryFile()
    preexec = None
    if user is not None:
        uid, gid = user

        def preexec():
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)

    child = subprocess.Popen(argv, env=env, stdout=log, stderr=log, preexec_fn=preexec)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        health = None
        while time.monotonic() < deadline and child.poll() is None:
            try:
                health = get(base + HEALTH)
                break
            except OSError:
                time.sleep(0.1)
        if health is None:
            log.seek(0)
            problem(where, f"svcgate did not answer {HEALTH} (exit {child.poll()}): {log.read().decode()[-2000:]}")
            return
        if health[0] != 200:
            problem(where, f"{HEALTH} answered {health[0]}")
        ready = get(base + READY)
        if ready[0] != 200 or '"store":"ok"' not in ready[1].replace(" ", ""):
            problem(where, f"{READY} answered {ready[0]} {ready[1]}")
        if data_dir is not None:
            key = Path(data_dir) / "secret.key"
            if not key.exists() or key.stat().st_mode & 0o077:
                problem(where, f"no secret.key of mode 0600 in the data directory {data_dir}")
            if user is not None and key.exists() and key.stat().st_uid != user[0]:
                problem(where, f"secret.key is not owned by uid {user[0]}")
        child.send_signal(signal.SIGTERM)
        try:
            status = child.wait(STOP_TIMEOUT)
            if status != 0:
                problem(where, f"svcgate exited {status} after SIGTERM")
        except subprocess.TimeoutExpired:
            problem(where, f"svcgate still running {STOP_TIMEOUT} s after SIGTERM")
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        log.close()


def dockerfile(repo, binary):
    """The container file: a build stage and a non-root runtime stage with the data directory as a volume."""
    where = "Dockerfile"
    lines = []
    for raw in (repo / "Dockerfile").read_text().replace("\\\n", " ").splitlines():
        stripped = raw.strip()
        if stripped and not stripped.startswith("#"):
            instruction, _, rest = stripped.partition(" ")
            lines.append((instruction.upper(), rest.strip()))
    stages = [index for index, (instruction, _) in enumerate(lines) if instruction == "FROM"]
    if len(stages) < 2:
        problem(where, "is not multi-stage (a build stage, then a runtime stage)")
        return None
    build_name = lines[stages[0]][1].split()[-1]
    build = lines[stages[0] : stages[-1]]
    runtime = lines[stages[-1] :]
    runs = [rest for instruction, rest in build if instruction == "RUN"]
    cargo = [step.strip() for run in runs for step in run.split("&&") if step.strip().startswith("cargo build")]
    if not cargo or "--release" not in cargo[0] or "--locked" not in cargo[0]:
        problem(where, "the build stage has no `cargo build --release --locked`")
    copies = [rest for instruction, rest in runtime if instruction == "COPY"]
    if not any(f"--from={build_name}" in copy and copy.split()[-1] == "/usr/local/bin/svcgate" for copy in copies):
        problem(where, "the runtime stage does not copy svcgate from the build stage to /usr/local/bin/svcgate")
    users = [rest for instruction, rest in runtime if instruction == "USER"]
    uid = users[-1].split(":")[0] if users else "root"
    if not uid.isdigit() or int(uid) == 0:
        problem(where, f"the runtime stage runs as {uid!r}: give USER a numeric non-root id (Kubernetes checks it)")
        uid = None
    env = {}
    for instruction, rest in runtime:
        if instruction == "ENV":
            for pair in shlex.split(rest):
                name, _, value = pair.partition("=")
                env[name] = value
    data_dir = env.get("SVCGATE_DATA_DIR")
    volumes = [volume for instruction, rest in runtime if instruction == "VOLUME" for volume in yaml.safe_load(rest)]
    if not data_dir or data_dir not in volumes:
        problem(where, f"the data directory ({data_dir}) is not a VOLUME ({volumes})")
    exposed = [rest.split("/")[0] for instruction, rest in runtime if instruction == "EXPOSE"]
    listen_port = env.get("SVCGATE_LISTEN", "").rsplit(":", 1)[-1]
    if listen_port not in exposed:
        problem(where, f"listens on {listen_port} but exposes {exposed}")
    entrypoint = [yaml.safe_load(rest) for instruction, rest in runtime if instruction == "ENTRYPOINT"]
    command = [yaml.safe_load(rest) for instruction, rest in runtime if instruction == "CMD"]
    argv = (entrypoint[-1] if entrypoint else []) + (command[-1] if command else [])
    if not argv or argv[0] != "/usr/local/bin/svcgate":
        problem(where, f"does not start /usr/local/bin/svcgate: {argv}")
        return None
    if problems:
        return None
    # The runtime stage, outside a container: its environment and command line, the built binary in place of
    # /usr/local/bin/svcgate, a fresh data directory owned by the image's user in place of the volume, loopback
    # instead of 0.0.0.0, and a backend address (what `-e SVCGATE_BACKEND=…` gives a container).
    with tempfile.TemporaryDirectory() as volume:
        os.chmod(volume, 0o700)
        user = None
        if uid is not None and os.geteuid() == 0:
            user = (int(uid), int(users[-1].split(":")[1]) if ":" in users[-1] else int(uid))
            os.chown(volume, *user)
        run_env = {"PATH": "/usr/bin:/bin", **env}
        run_env["SVCGATE_DATA_DIR"] = volume
        run_env["SVCGATE_LISTEN"] = f"127.0.0.1:{free_port()}"
        run_env["SVCGATE_BACKEND"] = "http://127.0.0.1:9"
        start_and_probe(f"{where} (runtime stage as uid {uid})", [str(binary)] + argv[1:], run_env, user, volume)
    return {"uid": int(uid) if uid else None, "port": int(listen_port) if listen_port.isdigit() else None}


def kubernetes(repo, binary, image):
    """Each variant under deploy/kubernetes/: the numbers agree, and svcgate starts with its ConfigMap's file."""
    root = repo / "deploy" / "kubernetes"
    variants = sorted(path for path in root.iterdir() if path.is_dir())
    names = [variant.name for variant in variants]
    if names != ["replicas", "single-node"]:
        problem(str(root), f"expected the variants replicas and single-node, found {names}")
    for variant in variants:
        where = f"deploy/kubernetes/{variant.name}"
        resources = {}
        for path in sorted(variant.glob("*.yaml")):
            for document in yaml.safe_load_all(path.read_text()):
                if document:
                    resources.setdefault(document["kind"], []).append(document)
        deployment = (resources.get("Deployment") or [None])[0]
        config_map = (resources.get("ConfigMap") or [None])[0]
        service = (resources.get("Service") or [None])[0]
        if not (deployment and config_map and service):
            problem(where, "needs a Deployment, a ConfigMap and a Service")
            continue
        pod = deployment["spec"]["template"]
        labels = pod["metadata"]["labels"]
        spec = pod["spec"]
        container = spec["containers"][0]
        config = tomllib.loads(config_map["data"]["svcgate.toml"])
        replicas = deployment["spec"]["replicas"]

        # The stop: preStop, then shutdown_delay, then shutdown_grace, then a margin, within the grace period.
        pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
        try:
            delay = seconds(config.get("shutdown_delay", "0s"))
            grace = seconds(config.get("shutdown_grace", "30s"))
        except ValueError as error:
            problem(where, f"the ConfigMap's shutdown_delay or shutdown_grace: {error}; write it like 30s")
            delay = grace = 0
        needed = pre_stop + delay + grace + EXIT_MARGIN
        termination = spec.get("terminationGracePeriodSeconds", 30)
        if termination < needed:
            problem(
                where,
                f"terminationGracePeriodSeconds {termination} < preStop {pre_stop} + shutdown_delay {delay:g} + "
                f"shutdown_grace {grace:g} + {EXIT_MARGIN}",
            )
        if pre_stop <= 0:
            problem(where, "no preStop pause: the pod would stop before the endpoints stop sending to it")

        probes = {
            "livenessProbe": HEALTH,
            "readinessProbe": READY,
            "startupProbe": HEALTH,
        }
        for probe, path in probes.items():
            got = container.get(probe, {}).get("httpGet", {}).get("path")
            if got != path:
                problem(where, f"{probe} is {got!r}, not {path}")
        listen_port = int(config["listen"].rsplit(":", 1)[1])
        ports = {port["name"]: port["containerPort"] for port in container.get("ports", [])}
        if ports.get("http") != listen_port or (image and image["port"] != listen_port):
            problem(where, f"containerPort {ports} does not match listen {config['listen']} and the image's port")
        if not config["listen"].startswith("0.0.0.0:"):
            problem(where, "svcgate listens on loopback only: the kubelet's probes could not reach it")
        if not all(labels.get(key) == value for key, value in service["spec"]["selector"].items()):
            problem(where, "the Service's selector does not select the pods")
        resources_spec = container.get("resources", {})
        for kind in ("requests", "limits"):
            if not {"cpu", "memory"} <= set(resources_spec.get(kind, {})):
                problem(where, f"the container has no cpu and memory {kind}")
        security = spec.get("securityContext", {})
        if not security.get("runAsNonRoot") or (image and security.get("runAsUser") != image["uid"]):
            problem(where, f"pods must run as non-root, as the image's user {image and image['uid']}")

        env = {item["name"]: item for item in container.get("env", [])}
        mounts = {mount["mountPath"]: mount["name"] for mount in container.get("volumeMounts", [])}
        volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
        key_file = env.get("SVCGATE_SECRET_KEY_FILE", {}).get("value", "")
        key_volume = volumes.get(mounts.get(str(Path(key_file).parent), ""), {})
        if "secret" not in key_volume:
            problem(where, "the secret key is not read from a mounted Secret (SVCGATE_SECRET_KEY_FILE)")
        if variant.name == "replicas":
            if replicas < 2:
                problem(where, f"{replicas} replica(s): the PostgreSQL variant runs at least 2")
            if "secretKeyRef" not in env.get("SVCGATE_DATABASE_URL", {}).get("valueFrom", {}):
                problem(where, "the database URL does not come from a Secret")
            selects_pods = lambda document: all(  # noqa: E731
                labels.get(key) == value for key, value in document["spec"]["selector"]["matchLabels"].items()
            )
            budgets = resources.get("PodDisruptionBudget", [])
            if not budgets or not selects_pods(budgets[0]):
                problem(where, "no PodDisruptionBudget selecting the pods")
            scalers = resources.get("HorizontalPodAutoscaler", [])
            if not scalers or scalers[0]["spec"]["scaleTargetRef"]["name"] != deployment["metadata"]["name"]:
                problem(where, "no HorizontalPodAutoscaler scaling the Deployment")
            elif scalers[0]["spec"].get("minReplicas", 1) < 2:
                problem(where, "the autoscaler may go below 2 replicas")
        else:
            if replicas != 1 or deployment["spec"].get("strategy", {}).get("type") != "Recreate":
                problem(where, "the SQLite variant runs exactly 1 replica with the Recreate strategy")
            data_volume = volumes.get(mounts.get(config.get("data_dir", ""), ""), {})
            if "persistentVolumeClaim" not in data_volume:
                problem(where, f"data_dir {config.get('data_dir')} is not on a PersistentVolumeClaim")
            claims = [claim["metadata"]["name"] for claim in resources.get("PersistentVolumeClaim", [])]
            if data_volume.get("persistentVolumeClaim", {}).get("claimName") not in claims:
                problem(where, "the data volume's claim is not among the manifests")

        # svcgate itself accepts the ConfigMap's file: started with it as the pod starts it (its args), with
        # the environment overriding what needs the cluster (a loopback port, a backend, the key, a data
        # directory instead of the replicas' PostgreSQL).
        with tempfile.TemporaryDirectory() as scratch:
            config_path = Path(scratch) / "svcgate.toml"
            config_path.write_text(config_map["data"]["svcgate.toml"])
            key_path = Path(scratch) / "secret-key"
            key_path.write_text(os.urandom(32).hex())
            args = [str(config_path) if arg.endswith("svcgate.toml") else arg for arg in container["args"]]
            data_dir = Path(scratch) / "data"
            data_dir.mkdir()
            run_env = {
                "PATH": "/usr/bin:/bin",
                "SVCGATE_LISTEN": f"127.0.0.1:{free_port()}",
                "SVCGATE_BACKEND": "http://127.0.0.1:9",
                "SVCGATE_DATA_DIR": str(data_dir),
                "SVCGATE_SECRET_KEY_FILE": str(key_path),
            }
            start_and_probe(f"{where} (its ConfigMap's svcgate.toml)", [str(binary)] + args, run_env)


def systemd(repo, binary):
    """The template unit: hardened, its own user, the key as a credential, a stop timeout above the drain."""
    path = repo / "deploy" / "systemd" / "svcgate@.service"
    where = "deploy/systemd/svcgate@.service"
    settings = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";", "[")):
            name, _, value = line.partition("=")
            settings.setdefault(name.strip(), []).append(value.strip())

    def one(name):
        return (settings.get(name) or [""])[-1]

    required = {
        "NoNewPrivileges": "true",
        "ProtectSystem": "strict",
        "ProtectHome": "true",
        "PrivateTmp": "true",
    }
    for name, value in required.items():
        if one(name) != value:
            problem(where, f"{name}={one(name)!r}, not {value}")
    if one("User") in ("", "root", "0") or one("DynamicUser") == "yes":
        problem(where, f"User={one('User')!r}: svcgate runs as its own system user")
    sysusers = (repo / "deploy" / "systemd" / "svcgate.sysusers").read_text()
    if not re.search(rf"^u\s+{re.escape(one('User'))}\s", sysusers, re.MULTILINE):
        problem(where, f"deploy/systemd/svcgate.sysusers does not create the user {one('User')}")
    if "%i" not in one("ExecStart") or "%i" not in one("StateDirectory"):
        problem(where, "not a template: ExecStart and StateDirectory must name the instance (%i)")
    credentials = [value.split(":", 1)[0] for value in settings.get("LoadCredential", [])]
    environment = " ".join(settings.get("Environment", []))
    if "secret_key" not in credentials or "SVCGATE_SECRET_KEY_FILE=%d/secret_key" not in environment:
        problem(where, "the key is not a LoadCredential= read through SVCGATE_SECRET_KEY_FILE=%d/secret_key")
    # The drain this unit allows for: the largest shutdown_delay its comment promises, plus shutdown_grace.
    comments = re.sub(r"\n#\s*", " ", path.read_text())
    promised = re.search(r"shutdown_delay of up to (\d+) s \+ the (\d+) s drain", comments)
    try:
        timeout = seconds(one("TimeoutStopSec") or "90s")
    except ValueError as error:
        problem(where, f"TimeoutStopSec: {error} (write whole seconds, like 45)")
        timeout = 0
    if not promised:
        problem(where, "the comment at TimeoutStopSec no longer says which drain it covers")
    elif timeout < int(promised.group(1)) + int(promised.group(2)) + EXIT_MARGIN:
        problem(where, f"TimeoutStopSec={timeout:g} does not cover the drain it documents plus {EXIT_MARGIN} s")

    # The unit's own command line and environment, with the instance's paths in a temporary directory.
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        argv = shlex.split(one("ExecStart").replace("%i", "check"))
        config_path = scratch / "check.toml"
        config_path.write_text('listen = "127.0.0.1:0"\nbackend = "http://127.0.0.1:9"\n')
        argv = [str(binary)] + [str(config_path) if arg == "/etc/svcgate/check.toml" else arg for arg in argv[1:]]
        state = scratch / "state"
        credentials_dir = scratch / "credentials"
        credentials_dir.mkdir()
        (credentials_dir / "secret_key").write_text(os.urandom(32).hex())
        run_env = {"PATH": "/usr/bin:/bin", "SVCGATE_LISTEN": f"127.0.0.1:{free_port()}"}
        for assignment in settings.get("Environment", []):
            name, _, value = assignment.partition("=")
            run_env[name] = (
                value.replace("%S", str(state)).replace("%i", "check").replace("%d", str(credentials_dir))
            )
        Path(run_env.get("SVCGATE_DATA_DIR", state)).mkdir(parents=True, exist_ok=True)
        if "SVCGATE_LISTEN" in [assignment.split("=")[0] for assignment in settings.get("Environment", [])]:
            problem(where, "sets the listen address in the unit; it belongs in the instance's file")
        start_and_probe(f"{where} (its ExecStart and Environment)", argv, run_env)


def main():
    repo = Path(sys.argv[1]).resolve()
    binary = Path(sys.argv[2]).resolve()
    image = dockerfile(repo, binary)
    kubernetes(repo, binary, image)
    systemd(repo, binary)
    for line in problems:
        print(f"deploy check: {line}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print("deploy check: the container file, the Kubernetes manifests and the systemd unit agree and start svcgate")


if __name__ == "__main__":
    main()
