# svcgate's container image: a build stage, then a small Debian runtime with the binary, CA roots and a
# user of its own. Build and run:
#
#   podman build -t svcgate .        (or: docker build -t svcgate .)
#   podman run -d -p 8080:8080 -v svcgate-data:/var/lib/svcgate \
#       -e SVCGATE_BACKEND=https://svc.example.com -e SVCGATE_PUBLIC_URL=https://svc-legacy.example.com svcgate
#
# deploy/check.sh (run by ./test.sh) lints this file with hadolint and runs its build step and its runtime
# layout outside a container (docs/deployment.md, "Container image").

# Bookworm on both sides: the binary links the build stage's glibc, which the runtime stage must not be older than.
FROM docker.io/library/rust:1.95-slim-bookworm AS build
WORKDIR /src
# The whole checkout (less .dockerignore): .cargo/config.toml carries SQLite's build options.
COPY . .
RUN cargo build --release --locked -p svcgate \
    && install -D -m 0755 target/release/svcgate /out/svcgate \
    && install -d -m 0700 /out/data

FROM docker.io/library/debian:bookworm-slim
# TLS to the backend and to PostgreSQL trusts the system roots: the build stage's bundle, no package manager run.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/svcgate /usr/local/bin/svcgate
# The user svcgate runs as, with the UID and GID the Kubernetes manifests name (runAsUser, fsGroup).
RUN groupadd --system --gid 10001 svcgate \
    && useradd --system --uid 10001 --gid svcgate --home-dir /var/lib/svcgate --shell /usr/sbin/nologin svcgate
COPY --from=build --chown=10001:10001 /out/data /var/lib/svcgate
USER 10001:10001
ENV SVCGATE_LISTEN=0.0.0.0:8080 \
    SVCGATE_DATA_DIR=/var/lib/svcgate \
    SVCGATE_LOG_FORMAT=json
# The SQLite store and, unless secret_key or secret_key_file is given, its key file.
VOLUME ["/var/lib/svcgate"]
EXPOSE 8080
# SIGTERM starts the drain (shutdown_delay, then shutdown_grace); give `docker stop -t`/`podman stop -t` 45.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/svcgate"]
CMD ["serve"]
