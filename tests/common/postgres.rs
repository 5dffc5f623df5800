//! A throwaway PostgreSQL cluster for one test: `initdb` into a temporary directory, `postgres` on a free
//! loopback port (another one if that was taken before the server bound it), stopped by its process id (fast
//! shutdown) and removed when dropped. Run as root, both run as the `postgres` user (the server refuses to run as
//! root), through `setpriv`, which runs the program in its own process, so the pid is the server's.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running cluster.
pub struct Postgres {
    server: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

fn binaries() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed (./test.sh installs Debian's postgresql)")
        .filter_map(|entry| entry.ok().map(|entry| entry.path().join("bin")))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    found.sort();
    found
        .pop()
        .expect("no PostgreSQL server binaries under /usr/lib/postgresql")
}

fn is_root() -> bool {
    // The effective uid, as `id -u` prints it (the standard library has no call for it).
    let output = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&output.stdout).trim() == "0"
}

/// A command that runs `program` as the `postgres` user when this process is root.
fn as_server_user(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("setpriv");
        command
            .args(["--reuid=postgres", "--regid=postgres", "--init-groups", "--"])
            .arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Postgres {
    /// Initialises and starts a cluster; waits until it accepts connections.
    pub fn start() -> Postgres {
        Postgres::start_with(None)
    }

    /// A cluster that also offers TLS with `tls`'s certificate chain and key (PEM), plaintext still allowed.
    pub fn start_with_tls(cert_pem: &str, key_pem: &str) -> Postgres {
        Postgres::start_with(Some((cert_pem, key_pem)))
    }

    fn start_with(tls: Option<(&str, &str)>) -> Postgres {
        let bin = binaries();
        let dir = tempfile::Builder::new().prefix("svcgate-pg-").tempdir().unwrap();
        let data = dir.path().join("data");
        if is_root() {
            let status = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown of the cluster directory failed");
        }
        let initdb = as_server_user(&bin.join("initdb"))
            .args([
                "--auth=trust",
                "--username=svcgate",
                "--encoding=UTF8",
                "--no-instructions",
                "-D",
            ])
            .arg(&data)
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert!(
            initdb.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&initdb.stderr)
        );
        // The port is picked free, then bound by the server: another process may take it in between, and the
        // server then exits. Readiness is asked over the cluster's own Unix socket, which no other server can
        // answer, and a server that exited so is started again on another port.
        let log_path = dir.path().join("server.log");
        let mut settings: Vec<String> = Vec::new();
        if let Some((cert_pem, key_pem)) = tls {
            use std::os::unix::fs::PermissionsExt;
            let (cert, key) = (dir.path().join("server.crt"), dir.path().join("server.key"));
            std::fs::write(&cert, cert_pem).unwrap();
            std::fs::write(&key, key_pem).unwrap();
            // The server refuses a key that others can read.
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
            if is_root() {
                let status = Command::new("chown")
                    .arg("postgres:postgres")
                    .args([&cert, &key])
                    .status()
                    .unwrap();
                assert!(status.success(), "chown of the TLS files failed");
            }
            settings.extend([
                "-c".to_owned(),
                "ssl=on".to_owned(),
                "-c".to_owned(),
                format!("ssl_cert_file={}", cert.display()),
                "-c".to_owned(),
                format!("ssl_key_file={}", key.display()),
            ]);
        }
        for _ in 0..5 {
            let port = free_port();
            let log = std::fs::File::create(&log_path).unwrap();
            let mut server = as_server_user(&bin.join("postgres"))
                .arg("-D")
                .arg(&data)
                .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1", "-k"])
                .arg(dir.path())
                .args(["-c", "max_connections=200"])
                .args(&settings)
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap();
            // Ready when it accepts sessions, not only connections (during start-up it refuses them).
            let ready = || {
                Command::new(bin.join("pg_isready"))
                    .args(["-q", "-p", &port.to_string(), "-U", "svcgate", "-h"])
                    .arg(dir.path())
                    .status()
                    .is_ok_and(|status| status.success())
            };
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if matches!(server.try_wait(), Ok(Some(_))) {
                    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                    assert!(
                        log.contains("could not bind"),
                        "PostgreSQL stopped while starting: {log}"
                    );
                    break;
                }
                if ready() {
                    return Postgres {
                        server,
                        port,
                        _dir: dir,
                    };
                }
                if Instant::now() > deadline {
                    drop(server.kill());
                    drop(server.wait());
                    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                    panic!("PostgreSQL did not start: {log}");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("PostgreSQL found no free port in 5 tries");
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("server.log")).unwrap_or_default()
    }

    /// The server's process id (the postmaster; each session is a child process of it).
    pub fn pid(&self) -> u32 {
        self.server.id()
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of `database` (TLS off: the cluster listens on loopback only).
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://svcgate@127.0.0.1:{}/{database}?sslmode=disable",
            self.port
        )
    }

    /// Creates an empty database and answers its URL.
    pub async fn database(&self, name: &str) -> String {
        let (client, connection) = tokio_postgres::connect(&self.url("postgres"), tokio_postgres::NoTls)
            .await
            .unwrap();
        let task = tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .await
            .unwrap();
        drop(client);
        drop(task.await);
        self.url(name)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // SIGINT is PostgreSQL's fast shutdown: sessions are ended, the cluster stops cleanly.
        let pid = self.server.id().to_string();
        drop(Command::new("kill").args(["-INT", &pid]).status());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(self.server.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(self.server.kill());
        drop(self.server.wait());
    }
}
