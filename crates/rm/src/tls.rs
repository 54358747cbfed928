//! HTTPS for Weft's daemons and their clients: Hadoop's `yarn.http.policy`
//! (`HttpPolicy`), the server's certificate and key from the PEM files
//! `ssl-server.xml` names (`ServerTls`), whom a client trusts (`ClientTls`:
//! a CA bundle, `ssl-client.xml`'s truststore, or the system's roots), and
//! a listener that hands `axum::serve` finished TLS connections
//! (`TlsListener`), so the RM and the node agents serve HTTPS the same way.
//!
//! Weft reads PEM, not Java keystores: a `jks` or `pkcs12` keystore is
//! refused at start with how to convert it. Client certificates are not
//! asked for (`hadoop.ssl.require.client.cert` must stay false); callers
//! are still who their `user.name` says.
//!
//! Which address to listen on, and which scheme the links a daemon hands out
//! carry, are the daemons' configuration's business (`config`, and the node
//! agent's); connecting as a client is `client`'s.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use weft_queue_tree::site::{HadoopConfig, Location, SiteError};

/// Hadoop's switch between HTTP and HTTPS for YARN's web endpoints.
pub const POLICY_PROPERTY: &str = "yarn.http.policy";
/// The core-site property naming the server's SSL resource.
pub const SERVER_CONF_PROPERTY: &str = "hadoop.ssl.server.conf";
/// Its default, a file in the configuration directory.
pub const DEFAULT_SERVER_CONF: &str = "ssl-server.xml";
/// The core-site property naming the clients' SSL resource.
pub const CLIENT_CONF_PROPERTY: &str = "hadoop.ssl.client.conf";
/// Its default, a file in the configuration directory.
pub const DEFAULT_CLIENT_CONF: &str = "ssl-client.xml";
/// Hadoop's switch for asking clients for certificates, which Weft does not do.
pub const REQUIRE_CLIENT_CERT_PROPERTY: &str = "hadoop.ssl.require.client.cert";

/// `ssl-server.xml`'s names.
mod names {
    pub(super) const KEYSTORE_LOCATION: &str = "ssl.server.keystore.location";
    pub(super) const KEYSTORE_TYPE: &str = "ssl.server.keystore.type";
    /// Weft's own: the private key in a file of its own, when the keystore
    /// file holds only the certificate chain (as certbot and most CAs
    /// deliver them).
    pub(super) const KEY_LOCATION: &str = "weft.ssl.server.keystore.key.location";
    /// Hadoop's: how often (milliseconds) the key material's files are
    /// looked at for a change, which is then served without a restart.
    pub(super) const RELOAD_INTERVAL: &str = "ssl.server.stores.reload.interval";
    pub(super) const TRUSTSTORE_LOCATION: &str = "ssl.client.truststore.location";
    pub(super) const TRUSTSTORE_TYPE: &str = "ssl.client.truststore.type";
}

/// How long a connection may take to finish its TLS handshake before it
/// is dropped: long enough for a slow client across a WAN, short enough
/// that idle sockets do not pile up.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the key material's files are looked at unless
/// `ssl.server.stores.reload.interval` says otherwise: Hadoop's default.
const DEFAULT_RELOAD_INTERVAL: Duration = Duration::from_secs(10);
/// Handshakes under way at once; past it, new connections wait in the
/// kernel's backlog rather than growing memory without bound.
const MAX_HANDSHAKES: usize = 1024;

/// `yarn.http.policy`: whether the daemons serve HTTP or HTTPS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HttpPolicy {
    /// Plain HTTP (Hadoop's default).
    #[default]
    HttpOnly,
    /// HTTPS only.
    HttpsOnly,
}

impl HttpPolicy {
    /// The policy a value names, in any case as Hadoop reads it; on a value
    /// Weft does not take, why.
    pub fn parse(value: &str) -> Result<HttpPolicy, &'static str> {
        let value = value.trim();
        if value.eq_ignore_ascii_case("HTTP_ONLY") {
            Ok(HttpPolicy::HttpOnly)
        } else if value.eq_ignore_ascii_case("HTTPS_ONLY") {
            Ok(HttpPolicy::HttpsOnly)
        } else if value.eq_ignore_ascii_case("HTTP_AND_HTTPS") {
            Err(
                "is not a policy Weft has: it serves one scheme on one address, HTTP_ONLY or HTTPS_ONLY",
            )
        } else {
            Err("is not HTTP_ONLY or HTTPS_ONLY")
        }
    }

    /// The scheme of the links a daemon under this policy hands out.
    pub fn scheme(self) -> &'static str {
        match self {
            HttpPolicy::HttpOnly => "http",
            HttpPolicy::HttpsOnly => "https",
        }
    }

    /// Whether the daemons serve HTTPS.
    pub fn is_https(self) -> bool {
        self == HttpPolicy::HttpsOnly
    }
}

impl fmt::Display for HttpPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HttpPolicy::HttpOnly => "HTTP_ONLY",
            HttpPolicy::HttpsOnly => "HTTPS_ONLY",
        })
    }
}

/// Why the key material or whom to trust could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {} ({why_read}): {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Which setting made Weft read it.
        why_read: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// An `ssl-*.xml` file is not a configuration file.
    #[error("{}: {error}", file.display())]
    Site {
        /// The file.
        file: PathBuf,
        /// What the reader found.
        error: SiteError,
    },
    /// A property of an `ssl-*.xml` file is missing or unusable.
    #[error("{}: {}property {property}: {why}", file.display(), at(location))]
    Property {
        /// The file.
        file: PathBuf,
        /// Where the property is set (`None` when it is missing).
        location: Option<Location>,
        /// The property.
        property: &'static str,
        /// What is wrong.
        why: String,
    },
    /// The certificates or key a property names are unusable.
    #[error("{} (named by {property}): {why}", path.display())]
    KeyMaterial {
        /// The PEM file.
        path: PathBuf,
        /// The property that names it, with the file it is set in.
        property: String,
        /// What is wrong.
        why: String,
    },
    /// The operating system's trusted roots could not be loaded.
    #[error("cannot load the system's trusted certificates: {0}")]
    SystemRoots(String),
}

fn at(location: &Option<Location>) -> String {
    location.map(|l| format!("{l}: ")).unwrap_or_default()
}

/// The TLS side of an HTTPS server: its certificate chain and key, and
/// where they came from, so that a renewed certificate is served without
/// a restart (`TlsListener` watches the files).
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
    /// What new handshakes are answered with; replaced on a reload.
    current: Arc<CurrentKey>,
    /// The file the certificate chain came from, for logs.
    certificate: PathBuf,
    /// The files to watch, for key material read from files.
    source: Option<KeySource>,
}

/// The key material new handshakes get. A lock rather than a rebuilt
/// `ServerConfig`, so that the listener, which holds the config, needs no
/// telling; a reload takes the write lock once in a while.
#[derive(Debug)]
struct CurrentKey(std::sync::RwLock<Arc<CertifiedKey>>);

impl CurrentKey {
    fn get(&self) -> Arc<CertifiedKey> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set(&self, key: Arc<CertifiedKey>) {
        *self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = key;
    }
}

impl rustls::server::ResolvesServerCert for CurrentKey {
    fn resolve(&self, _hello: rustls::server::ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.get())
    }
}

/// Where a server's key material came from, and how often to look again.
#[derive(Clone, Debug)]
struct KeySource {
    cert_path: PathBuf,
    cert_named_by: String,
    /// `None`: the key is in the certificate's file.
    key: Option<(PathBuf, String)>,
    /// `None`: never reloaded (`ssl.server.stores.reload.interval` 0).
    reload_every: Option<Duration>,
    /// The files' sizes and modification times when they were read.
    seen: FilesSeen,
}

/// A file's size and modification time, or `None` when it could not be
/// looked at: a change in either means a new file to read.
type FileSeen = Option<(u64, std::time::SystemTime)>;
type FilesSeen = [FileSeen; 2];

impl KeySource {
    fn look(&self) -> FilesSeen {
        let look = |p: &Path| {
            let m = std::fs::metadata(p).ok()?;
            Some((m.len(), m.modified().ok()?))
        };
        [
            look(&self.cert_path),
            self.key.as_ref().and_then(|(p, _)| look(p)),
        ]
    }

    /// Reads and checks the key material the files hold now.
    fn read(&self) -> Result<Arc<CertifiedKey>, TlsError> {
        let cert_pem = read_pem_file(&self.cert_path, &self.cert_named_by)?;
        let key_pem = match &self.key {
            Some((path, named_by)) => read_pem_file(path, named_by)?,
            None => cert_pem.clone(),
        };
        certified_key(&cert_pem, &key_pem).map_err(|e| {
            let (path, property) = match (&self.key, e.in_key) {
                (Some((path, named_by)), true) => (path.clone(), named_by.clone()),
                _ => (self.cert_path.clone(), self.cert_named_by.clone()),
            };
            TlsError::KeyMaterial {
                path,
                property,
                why: e.why,
            }
        })
    }
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTls")
            .field("certificate", &self.certificate)
            .finish_non_exhaustive()
    }
}

/// The ring provider every config here uses (no aws-lc-rs in the build).
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl ServerTls {
    /// The server's key material as the SSL resource at `file`
    /// (`ssl-server.xml`) names it: `ssl.server.keystore.location`, a PEM
    /// file with the certificate chain (leaf first) and, unless
    /// `weft.ssl.server.keystore.key.location` names another file, the
    /// private key. Relative paths are taken against `file`'s directory.
    pub fn load(file: &Path) -> Result<ServerTls, TlsError> {
        let site = read_ssl_conf(file, SERVER_CONF_PROPERTY)?;
        let dir = file.parent().unwrap_or(Path::new("."));
        check_pem_type(file, &site, names::KEYSTORE_TYPE)?;
        let cert_path = required_path(file, dir, &site, names::KEYSTORE_LOCATION)?;
        let key = match site.value(names::KEY_LOCATION) {
            Some(v) if !v.trim().is_empty() => Some((
                resolve(dir, v.trim()),
                format!("{} in {}", names::KEY_LOCATION, file.display()),
            )),
            _ => None,
        };
        let mut source = KeySource {
            cert_named_by: format!("{} in {}", names::KEYSTORE_LOCATION, file.display()),
            cert_path,
            key,
            reload_every: reload_interval(file, &site)?,
            seen: [None, None],
        };
        // Looked at before reading: a change in between is read again later.
        source.seen = source.look();
        let key = source.read()?;
        Ok(ServerTls::serving(
            key,
            source.cert_path.clone(),
            Some(source),
        ))
    }

    /// A server from PEM texts (tests, and embedders holding the key
    /// material themselves); `what` names their source in errors. Nothing
    /// is reloaded.
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8], what: &str) -> Result<ServerTls, TlsError> {
        let key = certified_key(cert_pem, key_pem).map_err(|e| TlsError::KeyMaterial {
            path: PathBuf::from(what),
            property: "the PEM given".to_owned(),
            why: e.why,
        })?;
        Ok(ServerTls::serving(key, PathBuf::from(what), None))
    }

    fn serving(
        key: Arc<CertifiedKey>,
        certificate: PathBuf,
        source: Option<KeySource>,
    ) -> ServerTls {
        let current = Arc::new(CurrentKey(std::sync::RwLock::new(key)));
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("the ring provider supports the default protocol versions")
            .with_no_client_auth()
            .with_cert_resolver(current.clone());
        // Weft's servers speak HTTP/1.1 only.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        ServerTls {
            config: Arc::new(config),
            current,
            certificate,
            source,
        }
    }

    /// The certificate chain new handshakes are answered with now (DER,
    /// the server's own first).
    pub fn chain(&self) -> Vec<CertificateDer<'static>> {
        self.current.get().cert.clone()
    }

    /// The file the certificate chain came from.
    pub fn certificate(&self) -> &Path {
        &self.certificate
    }
}

/// A problem with PEM key material, and whether it is in the key.
struct PemProblem {
    in_key: bool,
    why: String,
}

fn certified_key(cert_pem: &[u8], key_pem: &[u8]) -> Result<Arc<CertifiedKey>, PemProblem> {
    let cert_problem = |why: String| PemProblem { in_key: false, why };
    let key_problem = |why: String| PemProblem { in_key: true, why };
    let certs = certificates(cert_pem).map_err(cert_problem)?;
    if certs.is_empty() {
        return Err(cert_problem(no_pem_items("no certificate", cert_pem)));
    }
    if contains_label(key_pem, b"ENCRYPTED PRIVATE KEY") {
        return Err(key_problem(
            "the private key is encrypted, and Weft reads unencrypted keys only (keep the file readable by the daemon's user alone); decrypt it with `openssl pkcs8 -in key.pem -out plain-key.pem`".to_owned(),
        ));
    }
    let key = match PrivateKeyDer::from_pem_slice(key_pem) {
        Ok(k) => k,
        Err(pem::Error::NoItemsFound) => {
            return Err(key_problem(no_pem_items(
                "no private key (PKCS#8, RSA or EC)",
                key_pem,
            )));
        }
        Err(e) => return Err(key_problem(format!("cannot read the private key: {e}"))),
    };
    let signing_key = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|e| key_problem(format!("the private key cannot be used: {e}")))?;
    let certified = CertifiedKey::new(certs, signing_key);
    if let Err(e) = certified.keys_match() {
        return Err(key_problem(format!(
            "the private key does not belong to the first certificate, the server's own, which must come first in the chain ({e})"
        )));
    }
    Ok(Arc::new(certified))
}

/// `ssl.server.stores.reload.interval`: milliseconds, Hadoop's default
/// 10 s; 0 or less turns reloading off, as in Hadoop.
fn reload_interval(file: &Path, site: &HadoopConfig) -> Result<Option<Duration>, TlsError> {
    let Some(p) = site.get(names::RELOAD_INTERVAL) else {
        return Ok(Some(DEFAULT_RELOAD_INTERVAL));
    };
    match p.value.trim().parse::<i64>() {
        Ok(ms) if ms <= 0 => Ok(None),
        Ok(ms) => Ok(Some(Duration::from_millis(ms.unsigned_abs()))),
        Err(_) => Err(TlsError::Property {
            file: file.to_owned(),
            location: Some(p.location),
            property: names::RELOAD_INTERVAL,
            why: format!(
                "{:?} is not a whole number of milliseconds (0 turns reloading off)",
                p.value
            ),
        }),
    }
}

/// Looks at the key material's files every `every` and, when they have
/// changed, serves what they hold from the next handshake on. A change
/// that does not load (a certificate written before its key, say) is
/// logged and the old key material kept; it is tried again when the files
/// change again.
async fn watch_key_material(mut source: KeySource, current: Arc<CurrentKey>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let look = source.clone();
        let Ok((seen, read)) = tokio::task::spawn_blocking(move || {
            let seen = look.look();
            if seen == look.seen {
                return (seen, None);
            }
            (seen, Some(look.read()))
        })
        .await
        else {
            continue;
        };
        source.seen = seen;
        match read {
            None => {}
            Some(Ok(key)) => {
                current.set(key);
                tracing::info!(certificate = %source.cert_path.display(), "serving the server's renewed key material");
            }
            Some(Err(e)) => {
                tracing::error!(error = %e, "the server's key material changed but cannot be used; still serving the earlier one");
            }
        }
    }
}

/// Every certificate in `pem`, in order; other sections are skipped.
fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot read the certificates: {e}"))
}

fn contains_label(pem: &[u8], label: &[u8]) -> bool {
    let mut begin = b"-----BEGIN ".to_vec();
    begin.extend_from_slice(label);
    pem.windows(begin.len()).any(|w| w == begin.as_slice())
}

/// "holds {what}", with a hint when the file is no PEM at all: most often
/// a Java keystore, Hadoop's own format.
fn no_pem_items(what: &str, pem: &[u8]) -> String {
    if contains_label(pem, b"") {
        format!("holds {what}")
    } else {
        format!(
            "holds {what}: it is not PEM at all (a Java keystore or PKCS#12 file?); {}",
            CONVERT_HINT
        )
    }
}

/// How to turn a Java keystore into the PEM Weft reads.
const CONVERT_HINT: &str = "Weft reads PEM; convert a keystore with `keytool -importkeystore -srckeystore keystore.jks -destkeystore keystore.p12 -deststoretype pkcs12`, then `openssl pkcs12 -in keystore.p12 -nodes -out server.pem`";

/// Whom a client trusts when it calls an `https://` address.
#[derive(Clone)]
pub struct ClientTls {
    config: Arc<ClientConfig>,
    /// What the roots are, for errors ("the CA file /etc/weft/ca.pem").
    roots: Arc<str>,
}

impl fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTls")
            .field("roots", &self.roots)
            .finish_non_exhaustive()
    }
}

impl ClientTls {
    /// Trusts the CA certificates in the PEM file at `path` (a bundle of
    /// any number), and nothing else; `named_by` says where the path came
    /// from (`--ca-file`, `WEFT_CA_FILE`, a property) for errors.
    pub fn from_ca_file(path: &Path, named_by: &str) -> Result<ClientTls, TlsError> {
        let pem = read_pem_file(path, named_by)?;
        let bad = |why: String| TlsError::KeyMaterial {
            path: path.to_owned(),
            property: named_by.to_owned(),
            why,
        };
        let certs = certificates(&pem).map_err(bad)?;
        if certs.is_empty() {
            return Err(bad(no_pem_items("no certificate", &pem)));
        }
        let mut roots = RootCertStore::empty();
        for (n, cert) in certs.into_iter().enumerate() {
            roots.add(cert).map_err(|e| {
                bad(format!(
                    "certificate {} cannot be a trust anchor: {e}",
                    n + 1
                ))
            })?;
        }
        Ok(ClientTls::with_roots(
            roots,
            format!("the CA file {}", path.display()),
        ))
    }

    /// Trusts the operating system's roots (`rustls-native-certs`: the
    /// system store, or `SSL_CERT_FILE`/`SSL_CERT_DIR` when set). Loaded
    /// once per process: reading the store takes milliseconds.
    pub fn system() -> Result<ClientTls, TlsError> {
        static SYSTEM: OnceLock<Result<ClientTls, String>> = OnceLock::new();
        SYSTEM
            .get_or_init(|| {
                let found = rustls_native_certs::load_native_certs();
                let mut roots = RootCertStore::empty();
                let (added, _) = roots.add_parsable_certificates(found.certs);
                if added == 0 {
                    let why = match found.errors.first() {
                        Some(e) => e.to_string(),
                        None => "the system store holds no certificates".to_owned(),
                    };
                    return Err(why);
                }
                Ok(ClientTls::with_roots(
                    roots,
                    "the system's trusted certificates".to_owned(),
                ))
            })
            .clone()
            .map_err(TlsError::SystemRoots)
    }

    /// Whom the SSL resource at `file` (`ssl-client.xml`) says to trust:
    /// `ssl.client.truststore.location`, a PEM bundle of CA certificates
    /// (relative to `file`'s directory). `None` when the file is absent or
    /// names no truststore: the caller falls back to the system's roots,
    /// as a Java client falls back to its default truststore.
    pub fn from_client_conf(file: &Path) -> Result<Option<ClientTls>, TlsError> {
        if !file.exists() {
            return Ok(None);
        }
        let site = read_ssl_conf(file, CLIENT_CONF_PROPERTY)?;
        let Some(location) = site.value(names::TRUSTSTORE_LOCATION).map(str::trim) else {
            return Ok(None);
        };
        if location.is_empty() {
            return Ok(None);
        }
        check_pem_type(file, &site, names::TRUSTSTORE_TYPE)?;
        let dir = file.parent().unwrap_or(Path::new("."));
        let named_by = format!("{} in {}", names::TRUSTSTORE_LOCATION, file.display());
        ClientTls::from_ca_file(&resolve(dir, location), &named_by).map(Some)
    }

    fn with_roots(roots: RootCertStore, describe: String) -> ClientTls {
        let mut config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("the ring provider supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        ClientTls {
            config: Arc::new(config),
            roots: describe.into(),
        }
    }

    /// The rustls configuration.
    pub fn config(&self) -> &Arc<ClientConfig> {
        &self.config
    }

    /// What is trusted, for messages.
    pub fn roots(&self) -> &str {
        &self.roots
    }
}

/// Reads an `ssl-*.xml` resource named by `property` (or its default).
fn read_ssl_conf(file: &Path, property: &str) -> Result<HadoopConfig, TlsError> {
    let text = crate::config::read_config_file(file).map_err(|source| TlsError::Read {
        path: file.to_owned(),
        why_read: format!("the SSL resource {property} names"),
        source,
    })?;
    HadoopConfig::parse(&text).map_err(|error| TlsError::Site {
        file: file.to_owned(),
        error,
    })
}

/// Refuses a keystore or truststore type other than PEM (Hadoop's default,
/// `jks`, included: Weft cannot read Java keystores, and saying so at start
/// beats failing on the file's bytes).
fn check_pem_type(
    file: &Path,
    site: &HadoopConfig,
    property: &'static str,
) -> Result<(), TlsError> {
    let Some(p) = site.get(property) else {
        return Ok(());
    };
    let value = p.value.trim();
    if value.is_empty() || value.eq_ignore_ascii_case("pem") {
        return Ok(());
    }
    let why = if ["jks", "pkcs12", "jceks"]
        .iter()
        .any(|t| value.eq_ignore_ascii_case(t))
    {
        format!("{value:?} is a Java keystore type; {CONVERT_HINT}, and set {property} to pem")
    } else {
        format!("{value:?} is not a type Weft reads: set pem")
    };
    Err(TlsError::Property {
        file: file.to_owned(),
        location: Some(p.location),
        property,
        why,
    })
}

fn required_path(
    file: &Path,
    dir: &Path,
    site: &HadoopConfig,
    property: &'static str,
) -> Result<PathBuf, TlsError> {
    match site.get(property) {
        Some(p) if !p.value.trim().is_empty() => Ok(resolve(dir, p.value.trim())),
        found => Err(TlsError::Property {
            file: file.to_owned(),
            location: found.map(|p| p.location),
            property,
            why: "is not set: HTTPS needs a PEM file with the server's certificate chain and private key".to_owned(),
        }),
    }
}

fn read_pem_file(path: &Path, named_by: &str) -> Result<Vec<u8>, TlsError> {
    let read = || -> io::Result<Vec<u8>> {
        use std::io::Read as _;
        // A path to a device or a FIFO would block or grow without end.
        if !std::fs::metadata(path)?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let mut bytes = Vec::new();
        std::fs::File::open(path)?
            .take(crate::config::MAX_CONFIG_BYTES)
            .read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    read().map_err(|source| TlsError::Read {
        path: path.to_owned(),
        why_read: format!("named by {named_by}"),
        source,
    })
}

fn resolve(dir: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_owned()
    } else {
        dir.join(p)
    }
}

/// A listener serving TLS: accepts TCP connections, finishes each
/// handshake in a task of its own (so a slow or hostile client holds up
/// nobody else), and hands `axum::serve` the connections whose handshake
/// succeeded. A failed handshake is logged at debug and costs nothing else.
/// Dropping it stops accepting and frees the port.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    acceptor_task: JoinHandle<()>,
    /// Reloads renewed key material, when it came from files.
    watcher: Option<JoinHandle<()>>,
}

impl fmt::Debug for TlsListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsListener")
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

impl TlsListener {
    /// Serves TLS with `tls` on the bound `listener` (on the current tokio runtime).
    pub fn new(listener: TcpListener, tls: &ServerTls) -> io::Result<TlsListener> {
        let local = listener.local_addr()?;
        let acceptor = TlsAcceptor::from(tls.config.clone());
        let (tx, ready) = mpsc::channel(64);
        let acceptor_task = tokio::spawn(accept_loop(listener, acceptor, tx));
        let watcher = tls.source.as_ref().and_then(|source| {
            let every = source.reload_every?;
            Some(tokio::spawn(watch_key_material(
                source.clone(),
                tls.current.clone(),
                every,
            )))
        });
        Ok(TlsListener {
            ready,
            local,
            acceptor_task,
            watcher,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.acceptor_task.abort();
        if let Some(w) = &self.watcher {
            w.abort();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    ready: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    let handshakes = Arc::new(Semaphore::new(MAX_HANDSHAKES));
    loop {
        let Ok(permit) = handshakes.clone().acquire_owned().await else {
            return;
        };
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                accept_error(e).await;
                continue;
            }
        };
        // Small request/answer exchanges: do not let Nagle hold them back.
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let ready = ready.clone();
        tokio::spawn(async move {
            let shaken = tokio::time::timeout(HANDSHAKE_TIMEOUT, async {
                if speaks_plain_http(&tcp).await {
                    refuse_plain_http(tcp).await;
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a plain HTTP request on the HTTPS port (answered 400)",
                    ));
                }
                acceptor.accept(tcp).await
            })
            .await;
            drop(permit);
            match shaken {
                Ok(Ok(stream)) => {
                    // The server is gone when this fails: nothing to do.
                    let _ = ready.send((stream, peer)).await;
                }
                Ok(Err(e)) => {
                    tracing::debug!(peer = %peer, error = %e, "TLS handshake failed");
                }
                Err(_) => {
                    tracing::debug!(peer = %peer, "TLS handshake timed out");
                }
            }
        });
    }
}

/// Whether the client opened with plain text rather than a TLS record: a
/// TLS client's first byte is 22 (a handshake record), an HTTP request's
/// the first letter of its method.
async fn speaks_plain_http(tcp: &TcpStream) -> bool {
    let mut first = [0u8; 1];
    matches!(tcp.peek(&mut first).await, Ok(1) if first[0].is_ascii_uppercase())
}

/// Answers a plain HTTP request on the HTTPS port with a 400 saying so, as
/// Hadoop's Jetty does, rather than a closed connection that says nothing.
async fn refuse_plain_http(mut tcp: TcpStream) {
    use tokio::io::AsyncWriteExt as _;
    const BODY: &str =
        "This server speaks HTTPS only (yarn.http.policy is HTTPS_ONLY): call it with https://\n";
    let answer = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tcp.write_all(answer.as_bytes()).await;
    let _ = tcp.shutdown().await;
}

/// As axum's own TCP listener: a connection reset before it was accepted
/// is the client's business; anything else (out of file descriptors) is
/// logged, and accepting pauses a moment rather than spinning.
async fn accept_error(e: io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(accepted) => accepted,
            // The accepting task ended (aborted with the listener): no
            // more connections will come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use weft_test_support::tls::TestPki;
    use weft_test_support::{ScratchDir, site_xml};

    use super::*;

    /// `ServerTls::load` of an ssl-server.xml in `dir` with `props`, as an
    /// error message with the directory shown as `<dir>`.
    fn load_error(dir: &ScratchDir, props: &[(&str, &str)]) -> String {
        let file = dir.write("ssl-server.xml", site_xml(props));
        dir.hide(&ServerTls::load(&file).unwrap_err().to_string())
    }

    #[test]
    fn the_policy_takes_hadoops_values_in_any_case() {
        assert_eq!(HttpPolicy::parse("HTTPS_ONLY"), Ok(HttpPolicy::HttpsOnly));
        assert_eq!(HttpPolicy::parse(" https_only "), Ok(HttpPolicy::HttpsOnly));
        assert_eq!(HttpPolicy::parse("Http_Only"), Ok(HttpPolicy::HttpOnly));
        assert_eq!(
            HttpPolicy::parse("HTTP_AND_HTTPS"),
            Err(
                "is not a policy Weft has: it serves one scheme on one address, HTTP_ONLY or HTTPS_ONLY"
            )
        );
        assert_eq!(
            HttpPolicy::parse("TLS"),
            Err("is not HTTP_ONLY or HTTPS_ONLY")
        );
        assert_eq!(HttpPolicy::HttpsOnly.scheme(), "https");
        assert_eq!(HttpPolicy::default().to_string(), "HTTP_ONLY");
    }

    #[test]
    fn a_pem_file_with_chain_and_key_or_two_files_serve() {
        let pki = TestPki::new("test CA");
        let dir = ScratchDir::new("tls-good");
        dir.write("server.pem", pki.server_pem());
        let file = dir.write(
            "ssl-server.xml",
            site_xml(&[
                ("ssl.server.keystore.location", "server.pem"),
                // Hadoop's files always carry passwords; with PEM they mean nothing.
                ("ssl.server.keystore.password", "secret"),
                ("ssl.server.keystore.type", "PEM"),
            ]),
        );
        let tls = ServerTls::load(&file).unwrap();
        assert_eq!(tls.certificate(), dir.path().join("server.pem"));
        dir.write("cert.pem", &pki.cert_pem);
        let key = dir.write("key.pem", &pki.key_pem);
        let file = dir.write(
            "ssl-server.xml",
            site_xml(&[
                ("ssl.server.keystore.location", "cert.pem"),
                (
                    "weft.ssl.server.keystore.key.location",
                    &key.display().to_string(),
                ),
            ]),
        );
        ServerTls::load(&file).unwrap();
    }

    #[test]
    fn bad_key_material_names_the_file_the_property_and_why() {
        let pki = TestPki::new("test CA");
        let other = TestPki::new("another CA");
        let dir = ScratchDir::new("tls-bad");
        let missing = dir.path().join("ssl-server.xml");
        assert_eq!(
            dir.hide(&ServerTls::load(&missing).unwrap_err().to_string()),
            "cannot read <dir>/ssl-server.xml (the SSL resource hadoop.ssl.server.conf names): No such file or directory (os error 2)"
        );
        assert_eq!(
            load_error(&dir, &[("ssl.server.keystore.type", "pem")]),
            "<dir>/ssl-server.xml: property ssl.server.keystore.location: is not set: HTTPS needs a PEM file with the server's certificate chain and private key"
        );
        assert_eq!(
            load_error(
                &dir,
                &[
                    ("ssl.server.keystore.location", "keystore.jks"),
                    ("ssl.server.keystore.type", "jks"),
                ]
            ),
            "<dir>/ssl-server.xml: line 3, column 48: property ssl.server.keystore.type: \"jks\" is a Java keystore type; Weft reads PEM; convert a keystore with `keytool -importkeystore -srckeystore keystore.jks -destkeystore keystore.p12 -deststoretype pkcs12`, then `openssl pkcs12 -in keystore.p12 -nodes -out server.pem`, and set ssl.server.keystore.type to pem"
        );
        assert_eq!(
            load_error(&dir, &[("ssl.server.keystore.location", "nowhere.pem")]),
            "cannot read <dir>/nowhere.pem (named by ssl.server.keystore.location in <dir>/ssl-server.xml): No such file or directory (os error 2)"
        );
        dir.write("cert-only.pem", &pki.cert_pem);
        assert_eq!(
            load_error(&dir, &[("ssl.server.keystore.location", "cert-only.pem")]),
            "<dir>/cert-only.pem (named by ssl.server.keystore.location in <dir>/ssl-server.xml): holds no private key (PKCS#8, RSA or EC)"
        );
        dir.write("key-only.pem", &pki.key_pem);
        assert_eq!(
            load_error(&dir, &[("ssl.server.keystore.location", "key-only.pem")]),
            "<dir>/key-only.pem (named by ssl.server.keystore.location in <dir>/ssl-server.xml): holds no certificate"
        );
        // A Java keystore under a PEM type: its magic number, then binary.
        dir.write("keystore.jks", [0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2]);
        assert!(
            load_error(&dir, &[("ssl.server.keystore.location", "keystore.jks")])
                .ends_with("holds no certificate: it is not PEM at all (a Java keystore or PKCS#12 file?); Weft reads PEM; convert a keystore with `keytool -importkeystore -srckeystore keystore.jks -destkeystore keystore.p12 -deststoretype pkcs12`, then `openssl pkcs12 -in keystore.p12 -nodes -out server.pem`")
        );
        dir.write(
            "mismatched.pem",
            format!("{}{}", pki.cert_pem, other.key_pem),
        );
        assert!(
            load_error(&dir, &[("ssl.server.keystore.location", "mismatched.pem")])
                .starts_with("<dir>/mismatched.pem (named by ssl.server.keystore.location in <dir>/ssl-server.xml): the private key does not belong to the first certificate, the server's own, which must come first in the chain")
        );
        dir.write(
            "encrypted.pem",
            format!(
                "{}-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n",
                pki.cert_pem
            ),
        );
        assert!(
            load_error(&dir, &[("ssl.server.keystore.location", "encrypted.pem")])
                .ends_with("the private key is encrypted, and Weft reads unencrypted keys only (keep the file readable by the daemon's user alone); decrypt it with `openssl pkcs8 -in key.pem -out plain-key.pem`")
        );
        dir.write("cert.pem", &pki.cert_pem);
        assert_eq!(
            load_error(
                &dir,
                &[
                    ("ssl.server.keystore.location", "cert.pem"),
                    ("weft.ssl.server.keystore.key.location", "no-key.pem"),
                ]
            ),
            "cannot read <dir>/no-key.pem (named by weft.ssl.server.keystore.key.location in <dir>/ssl-server.xml): No such file or directory (os error 2)"
        );
        assert!(
            load_error(&dir, &[("ssl.server.keystore.location", "x.pem")])
                .starts_with("cannot read <dir>/x.pem")
        );
        dir.write("ssl-server.xml", "<configuration>");
        assert!(
            ServerTls::load(&missing)
                .unwrap_err()
                .to_string()
                .starts_with(&format!("{}: ", missing.display()))
        );
    }

    /// Whether a client trusting only `ca` completes a handshake with `addr`.
    async fn trusted_by(addr: SocketAddr, ca: &Path) -> bool {
        let tls = ClientTls::from_ca_file(ca, "the test").unwrap();
        let connector = tokio_rustls::TlsConnector::from(tls.config().clone());
        let tcp = TcpStream::connect(addr).await.unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        connector.connect(name, tcp).await.is_ok()
    }

    #[tokio::test]
    async fn a_renewed_certificate_is_served_without_a_restart_and_a_broken_one_is_not() {
        let (old, new) = (TestPki::new("old CA"), TestPki::new("new CA"));
        let dir = ScratchDir::new("tls-reload");
        let (old_ca, new_ca) = (
            dir.write("old-ca.pem", &old.ca_pem),
            dir.write("new-ca.pem", &new.ca_pem),
        );
        dir.write("server.pem", old.server_pem());
        let file = dir.write(
            "ssl-server.xml",
            site_xml(&[
                ("ssl.server.keystore.location", "server.pem"),
                ("ssl.server.stores.reload.interval", "20"),
            ]),
        );
        let tls = ServerTls::load(&file).unwrap();
        let listener =
            TlsListener::new(TcpListener::bind("127.0.0.1:0").await.unwrap(), &tls).unwrap();
        let addr = listener.local;
        assert!(trusted_by(addr, &old_ca).await);
        assert!(!trusted_by(addr, &new_ca).await);

        dir.write("server.pem", new.server_pem());
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !trusted_by(addr, &new_ca).await {
            assert!(
                std::time::Instant::now() < deadline,
                "the renewed certificate was never served"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!trusted_by(addr, &old_ca).await);
        let served = tls.chain();
        assert_eq!(served.len(), 1);
        assert_eq!(
            Some(&served[0]),
            certificates(new.cert_pem.as_bytes()).unwrap().first()
        );

        // A certificate written without its key: the last good one stays.
        dir.write("server.pem", format!("{}{}", old.cert_pem, new.key_pem));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(trusted_by(addr, &new_ca).await);
        assert_eq!(tls.chain(), served);
        drop(listener);
    }

    #[test]
    fn the_reload_interval_is_hadoops_milliseconds_and_zero_turns_it_off() {
        let pki = TestPki::new("test CA");
        let dir = ScratchDir::new("tls-interval");
        dir.write("server.pem", pki.server_pem());
        let every = |value: Option<&str>| {
            let mut props = vec![("ssl.server.keystore.location", "server.pem")];
            props.extend(value.map(|v| ("ssl.server.stores.reload.interval", v)));
            let file = dir.write("ssl-server.xml", site_xml(&props));
            ServerTls::load(&file).map(|t| t.source.and_then(|s| s.reload_every))
        };
        assert_eq!(every(None).unwrap(), Some(Duration::from_secs(10)));
        assert_eq!(
            every(Some("250")).unwrap(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(every(Some("0")).unwrap(), None);
        assert_eq!(every(Some("-1")).unwrap(), None);
        assert_eq!(
            dir.hide(&every(Some("soon")).unwrap_err().to_string()),
            "<dir>/ssl-server.xml: line 3, column 57: property ssl.server.stores.reload.interval: \"soon\" is not a whole number of milliseconds (0 turns reloading off)"
        );
    }

    #[test]
    fn the_client_conf_names_a_pem_truststore_or_nothing() {
        let pki = TestPki::new("test CA");
        let dir = ScratchDir::new("tls-client");
        let file = dir.path().join("ssl-client.xml");
        // No file, or no truststore in it: the caller's fallback.
        assert!(ClientTls::from_client_conf(&file).unwrap().is_none());
        dir.write(
            "ssl-client.xml",
            site_xml(&[("ssl.client.truststore.password", "x")]),
        );
        assert!(ClientTls::from_client_conf(&file).unwrap().is_none());
        dir.write("ca.pem", &pki.ca_pem);
        dir.write(
            "ssl-client.xml",
            site_xml(&[("ssl.client.truststore.location", "ca.pem")]),
        );
        let tls = ClientTls::from_client_conf(&file).unwrap().unwrap();
        assert_eq!(
            tls.roots(),
            format!("the CA file {}", dir.path().join("ca.pem").display())
        );
        dir.write(
            "ssl-client.xml",
            site_xml(&[
                ("ssl.client.truststore.location", "truststore.jks"),
                ("ssl.client.truststore.type", "jks"),
            ]),
        );
        let e = ClientTls::from_client_conf(&file).unwrap_err().to_string();
        assert!(
            e.contains("property ssl.client.truststore.type: \"jks\" is a Java keystore type"),
            "{e}"
        );
        dir.write("empty.pem", "");
        let e = ClientTls::from_ca_file(&dir.path().join("empty.pem"), "--ca-file")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "{} (named by --ca-file): holds no certificate: it is not PEM at all (a Java keystore or PKCS#12 file?); {CONVERT_HINT}",
                dir.path().join("empty.pem").display()
            )
        );
    }
}
