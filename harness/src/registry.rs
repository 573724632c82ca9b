//! Debian's `docker-registry` (distribution 2.8) as a test registry: the publish path of
//! `make e2e-registry` and `make release-dry-run`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gangwarden_test_apiserver::client;

/// Debian's registry, serving a folder on 127.0.0.1, stopped when dropped.
pub struct Registry {
    child: Child,
    pub port: u16,
}

impl Registry {
    pub fn start(binary: &Path, dir: &Path) -> Result<Registry, String> {
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let config = dir.join("config.yml");
        let data = dir.join("data");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: warn}}\nstorage: {{filesystem: {{rootdirectory: {}}}}}\nhttp: {{addr: 127.0.0.1:{port}}}\n",
                data.display()
            ),
        )
        .map_err(|e| e.to_string())?;
        let log = std::fs::File::create(dir.join("registry.log")).map_err(|e| e.to_string())?;
        let child = Command::new(binary)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut registry = Registry { child, port };
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = registry.child.try_wait() {
                let log = std::fs::read_to_string(dir.join("registry.log")).unwrap_or_default();
                return Err(format!("docker-registry exited ({status}):\n{log}"));
            }
            if matches!(client::get(&format!("http://127.0.0.1:{port}/v2/")), Ok((200, _))) {
                return Ok(registry);
            }
            if started.elapsed() > Duration::from_secs(30) {
                return Err("docker-registry did not answer /v2/ within 30 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Where `make publish REGISTRY=…` puts the modules.
    pub fn prefix(&self) -> String {
        format!("127.0.0.1:{}/gangwarden/policies", self.port)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Sigstore trust root `kwctl verify` reads instead of downloading one (it builds one even
/// for key-based signatures): `KWCTL_SIGSTORE_TRUST_CONFIG`, else a
/// `sigstore-trust-config.json` beside kwctl; `None` lets kwctl download the public one.
pub fn trust_config(kwctl: &Path) -> Option<PathBuf> {
    let beside = kwctl.canonicalize().ok().and_then(|k| Some(k.parent()?.join("sigstore-trust-config.json")));
    std::env::var_os("KWCTL_SIGSTORE_TRUST_CONFIG").map(PathBuf::from).or(beside).filter(|p| p.is_file())
}
