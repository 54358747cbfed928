//! A small HTTP/1.1 client for Weft's API: one kept-alive connection to the
//! RM, JSON in and out, `?user.name=` added for the caller, and Hadoop's
//! `RemoteException` turned back into a typed error.
//!
//! The `weft` command's YARN-style subcommands (`cli`) and the load
//! generator (`load`) use it; it knows paths and bodies, not what they mean.
//!
//! An `https://` address is called over TLS, trusting what the caller set
//! (`RmClient::with_tls`), else what the process set for all its clients
//! (`set_default_trust`: the `weft` command's `--ca-file`), else the
//! system's roots (`tls`).
//!
//! A call waits for the RM as long as it takes unless the caller sets a
//! timeout (`RmClient::with_timeout`): what is long enough depends on the
//! caller. The `weft` command's one-shot clients and the load generator set
//! one (`--request-timeout-ms`); a node agent's client has always waited.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpStream;

use crate::dto::apps::NewApplicationDto;
use crate::http::error::RemoteException;
use crate::tls::{ClientTls, TlsError};

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The RM's address is not `[http[s]://]host[:port][/]`.
    #[error("invalid resource manager address {url:?}: {why}")]
    InvalidUrl {
        /// The address given.
        url: String,
        /// What is wrong.
        why: String,
    },
    /// No connection.
    #[error("cannot connect to the resource manager at {addr}: {source}")]
    Connect {
        /// `host:port`.
        addr: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The TLS handshake failed: most often the RM's certificate is not
    /// one the client trusts.
    #[error("TLS with the resource manager at {addr} failed: {why}")]
    Tls {
        /// `host:port`.
        addr: String,
        /// Why, with what the client trusts.
        why: String,
    },
    /// Whom to trust could not be worked out.
    #[error(transparent)]
    Trust(#[from] TlsError),
    /// The connection broke.
    #[error("HTTP exchange with the resource manager failed: {0}")]
    Http(#[from] hyper::Error),
    /// The RM did not answer within the client's timeout (connecting included).
    #[error("the resource manager at {addr} did not answer within {} ms", after.as_millis())]
    Timeout {
        /// `host:port`.
        addr: String,
        /// The timeout.
        after: Duration,
    },
    /// The RM refused, with its `RemoteException`.
    #[error("{status}: {}", exception.message)]
    Remote {
        /// The status.
        status: StatusCode,
        /// Hadoop's error body.
        exception: RemoteException,
    },
    /// The RM answered something unexpected.
    #[error("unexpected answer from the resource manager ({status}): {why}")]
    Unexpected {
        /// The status.
        status: StatusCode,
        /// What was wrong with it.
        why: String,
    },
}

/// An answer: status, `Location` and body.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The status.
    pub status: StatusCode,
    /// The `Location` header, if any.
    pub location: Option<String>,
    /// The body.
    pub body: Bytes,
}

/// The port of YARN's RM web address (`yarn.resourcemanager.webapp.address`),
/// which an address without one means: an operator who types `--rm rm1`
/// means that RM, not a web server on port 80.
pub const DEFAULT_RM_PORT: u16 = 8088;

/// The port of YARN's RM HTTPS web address
/// (`yarn.resourcemanager.webapp.https.address`), which an `https://`
/// address without one means.
pub const DEFAULT_RM_HTTPS_PORT: u16 = 8090;

/// The `host:port` to connect to for an RM address typed as `host`,
/// `host:port`, `http[s]://host` or `http[s]://host:port` (with an optional
/// trailing `/`); a missing port is [`DEFAULT_RM_PORT`] (for `https://`,
/// [`DEFAULT_RM_HTTPS_PORT`]), an explicit one (even 80) is kept. Anything
/// else is refused with what is wrong, rather than silently dropped (a
/// path, a query) or sent somewhere unintended.
pub fn rm_authority(url: &str) -> Result<String, ClientError> {
    rm_target(url).map(|(_, authority)| authority)
}

/// Whether `url` is an `https://` address, and its `host:port` as
/// [`rm_authority`] gives it.
fn rm_target(url: &str) -> Result<(bool, String), ClientError> {
    let invalid = |why: String| ClientError::InvalidUrl {
        url: url.to_owned(),
        why,
    };
    if url.trim().is_empty() {
        return Err(invalid("it is empty".to_owned()));
    }
    if url.trim() != url {
        return Err(invalid("it has spaces around it".to_owned()));
    }
    let (https, rest) = match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => (false, rest),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => (true, rest),
        Some((scheme, _)) => {
            return Err(invalid(format!(
                "only http:// and https:// are supported, not {scheme}://"
            )));
        }
        None => (false, url),
    };
    let (authority, tail) = match rest.find(['/', '?', '#']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    // The client adds its own paths; a path typed here would be ignored.
    if !tail.is_empty() && tail != "/" {
        return Err(invalid(format!(
            "{tail:?} after the host: give only the host and port"
        )));
    }
    if authority.contains('@') {
        return Err(invalid(
            "user information (user@) is not supported".to_owned(),
        ));
    }
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let Some((inside, after)) = bracketed.split_once(']') else {
            return Err(invalid("an IPv6 address has no closing ]".to_owned()));
        };
        let port = match after {
            "" => None,
            _ => match after.strip_prefix(':') {
                Some(p) => Some(p),
                None => return Err(invalid(format!("{after:?} after the IPv6 address"))),
            },
        };
        (&authority[..inside.len() + 2], port)
    } else {
        match authority.split_once(':') {
            Some((_, p)) if p.contains(':') => {
                return Err(invalid(
                    "an IPv6 address must be in brackets, as http://[::1]:8088".to_owned(),
                ));
            }
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host == "[]" {
        return Err(invalid("no host".to_owned()));
    }
    if host.parse::<http::uri::Authority>().is_err() {
        return Err(invalid(format!("{host:?} is not a host name or address")));
    }
    let port = match port {
        None if https => DEFAULT_RM_HTTPS_PORT,
        None => DEFAULT_RM_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => {
                return Err(invalid(format!(
                    "port {p:?} is not a number from 1 to 65535"
                )));
            }
        },
    };
    Ok((https, format!("{host}:{port}")))
}

/// Whom every `https://` client of this process trusts unless told
/// otherwise; set once, by the binary (the `weft` command's `--ca-file`).
static DEFAULT_TRUST: std::sync::OnceLock<ClientTls> = std::sync::OnceLock::new();

/// Makes `tls` what every `https://` client of this process trusts unless
/// given its own (`RmClient::with_tls`); the first call wins, and later
/// ones are refused with the trust in force. For the binary's start: the
/// clients a command makes deep inside (the distributed shell's, the load
/// generator's) then trust what the command line said.
pub fn set_default_trust(tls: ClientTls) -> Result<(), ClientTls> {
    DEFAULT_TRUST.set(tls)
}

/// `host:port` as a URL with the scheme of `like` (an RM address): the
/// daemons of one cluster share `yarn.http.policy`, so an AM that reached
/// the RM over HTTPS reaches the nodes the same way.
pub fn url_like(like: &str, authority: &str) -> String {
    let https = like
        .split_once("://")
        .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("https"));
    let scheme = if https { "https" } else { "http" };
    format!("{scheme}://{authority}")
}

/// A client for one RM.
pub struct RmClient {
    authority: String,
    /// `Some` for an `https://` address: whom to trust, `None` until set
    /// or first needed (then the process's default, else the system's roots).
    https: Option<Option<ClientTls>>,
    user: Option<String>,
    sender: Option<SendRequest<Full<Bytes>>>,
    /// How long one call may take, from connecting to the end of the body;
    /// `None` waits for ever.
    timeout: Option<Duration>,
    /// Sent as `Authorization: Bearer <token>` on every call: an AM's
    /// token, or a node's secret. Never shown by `Debug`.
    bearer: Option<String>,
}

impl std::fmt::Debug for RmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RmClient")
            .field("authority", &self.authority)
            .field("https", &self.https.is_some())
            .field("user", &self.user)
            .field("timeout", &self.timeout)
            .field("bearer", &self.bearer.as_ref().map(|_| ".."))
            .finish()
    }
}

impl RmClient {
    /// A client for the RM at `url` (see [`rm_authority`]), calling as `user`.
    pub fn new(url: &str, user: Option<String>) -> Result<RmClient, ClientError> {
        let (https, authority) = rm_target(url)?;
        Ok(RmClient {
            authority,
            https: https.then_some(None),
            user,
            sender: None,
            timeout: None,
            bearer: None,
        })
    }

    /// The same client, showing `token` on every call as
    /// `Authorization: Bearer <token>`: an AM's token for the AM protocol,
    /// or the node secret for the node protocol.
    pub fn with_bearer(mut self, token: impl Into<String>) -> RmClient {
        self.bearer = Some(token.into());
        self
    }

    /// Shows `token` on every call from now on (`None`: no more), for a
    /// client whose token changes (an AM's next attempt).
    pub fn set_bearer(&mut self, token: Option<String>) {
        self.bearer = token;
    }

    /// The same client, failing each call that takes longer than `timeout`
    /// with `ClientError::Timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> RmClient {
        self.timeout = Some(timeout);
        self
    }

    /// The same client trusting `tls` for an `https://` address (a plain
    /// `http://` one is called as before).
    pub fn with_tls(mut self, tls: ClientTls) -> RmClient {
        if self.https.is_some() {
            self.https = Some(Some(tls));
        }
        self
    }

    /// The `host:port` called.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// Whether the RM is called over HTTPS.
    pub fn is_https(&self) -> bool {
        self.https.is_some()
    }

    async fn connect(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, ClientError> {
        if self.sender.as_ref().is_none_or(|s| s.is_closed()) {
            let stream = TcpStream::connect(&self.authority)
                .await
                .map_err(|source| ClientError::Connect {
                    addr: self.authority.clone(),
                    source,
                })?;
            let _ = stream.set_nodelay(true);
            let sender = match &mut self.https {
                None => http1(stream).await?,
                Some(trust) => {
                    let tls = match trust {
                        Some(tls) => tls.clone(),
                        None => {
                            let tls = match DEFAULT_TRUST.get() {
                                Some(tls) => tls.clone(),
                                None => ClientTls::system()?,
                            };
                            *trust = Some(tls.clone());
                            tls
                        }
                    };
                    http1(tls_handshake(&self.authority, &tls, stream).await?).await?
                }
            };
            self.sender = Some(sender);
        }
        let sender = self.sender.as_mut().expect("connected just above");
        sender.ready().await?;
        Ok(sender)
    }

    fn path_with_user(&self, path: &str) -> String {
        match &self.user {
            Some(user) => {
                let sep = if path.contains('?') { '&' } else { '?' };
                format!("{path}{sep}user.name={}", encode_query(user))
            }
            None => path.to_owned(),
        }
    }

    /// Sends one request with a JSON body (or none) and returns the raw answer.
    pub async fn request(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Answer, ClientError> {
        let Some(after) = self.timeout else {
            return self.exchange(method, path, body).await;
        };
        match tokio::time::timeout(after, self.exchange(method, path, body)).await {
            Ok(res) => res,
            Err(_) => {
                // The connection still carries the unanswered request, and
                // HTTP/1.1 answers in order: the next call would queue
                // behind it. Dropping it makes hyper close it.
                self.sender = None;
                Err(ClientError::Timeout {
                    addr: self.authority.clone(),
                    after,
                })
            }
        }
    }

    async fn exchange(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Answer, ClientError> {
        let uri = self.path_with_user(path);
        let authority = self.authority.clone();
        let bearer = self.bearer.as_ref().map(|t| format!("Bearer {t}"));
        let build = |body: Option<Vec<u8>>| {
            let mut b = Request::builder()
                .method(method.clone())
                .uri(uri.as_str())
                .header(header::HOST, authority.as_str())
                .header(header::ACCEPT, "application/json");
            if let Some(value) = &bearer {
                b = b.header(header::AUTHORIZATION, value.as_str());
            }
            if body.is_some() {
                b = b.header(header::CONTENT_TYPE, "application/json");
            }
            b.body(Full::new(Bytes::from(body.unwrap_or_default())))
                .map_err(|e| ClientError::Unexpected {
                    status: StatusCode::BAD_REQUEST,
                    why: format!("cannot build the request: {e}"),
                })
        };
        let req = build(body.clone())?;
        let res = match self.connect().await?.send_request(req).await {
            Ok(res) => res,
            // A kept-alive connection the server closed: try once more on a new one.
            Err(e) if e.is_canceled() || e.is_closed() || e.is_incomplete_message() => {
                self.sender = None;
                let req = build(body)?;
                self.connect().await?.send_request(req).await?
            }
            Err(e) => return Err(e.into()),
        };
        let status = res.status();
        let location = res
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = res.into_body().collect().await?.to_bytes();
        Ok(Answer {
            status,
            location,
            body,
        })
    }

    /// Sends a request and decodes a successful JSON answer, or the error.
    pub async fn call<T: DeserializeOwned>(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<T, ClientError> {
        let bytes = match body {
            Some(b) => Some(serde_json::to_vec(b).map_err(|e| ClientError::Unexpected {
                status: StatusCode::BAD_REQUEST,
                why: format!("cannot encode the request: {e}"),
            })?),
            None => None,
        };
        let answer = self.request(method, path, bytes).await?;
        decode(&answer)
    }

    /// `GET path`, decoded.
    pub async fn get<T: DeserializeOwned>(&mut self, path: &str) -> Result<T, ClientError> {
        self.call(Method::GET, path, None::<&()>).await
    }

    /// `POST /ws/v1/cluster/apps`: submits an application (a
    /// `SubmitApplicationDto`, or JSON in its shape). `Ok` once the RM took
    /// it (202); a placement or ACL refusal may still fail the app after
    /// that, as in Hadoop, so a caller that must know reads its report.
    pub async fn submit_application(
        &mut self,
        submission: &impl Serialize,
    ) -> Result<(), ClientError> {
        let bytes = serde_json::to_vec(submission).map_err(|e| ClientError::Unexpected {
            status: StatusCode::BAD_REQUEST,
            why: format!("cannot encode the submission: {e}"),
        })?;
        let answer = self
            .request(Method::POST, "/ws/v1/cluster/apps", Some(bytes))
            .await?;
        if answer.status != StatusCode::ACCEPTED {
            return Err(remote_error(&answer));
        }
        Ok(())
    }

    /// `POST /ws/v1/cluster/apps/new-application`: an id to submit an app with.
    pub async fn new_application(&mut self) -> Result<NewApplicationDto, ClientError> {
        self.call(
            Method::POST,
            "/ws/v1/cluster/apps/new-application",
            None::<&()>,
        )
        .await
    }
}

/// An HTTP/1.1 connection over `io` (TCP or TLS), driven by a task of its own.
async fn http1<S>(io: S) -> Result<SendRequest<Full<Bytes>>, hyper::Error>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// The TLS handshake with the RM at `authority` over `stream`, checking
/// its certificate against `tls`; a refusal says why in words.
async fn tls_handshake(
    authority: &str,
    tls: &ClientTls,
    stream: TcpStream,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, ClientError> {
    let failed = |why: String| ClientError::Tls {
        addr: authority.to_owned(),
        why,
    };
    let host = match authority.rsplit_once(':') {
        Some((host, _)) => host.trim_start_matches('[').trim_end_matches(']'),
        None => authority,
    };
    let name = rustls::pki_types::ServerName::try_from(host.to_owned()).map_err(|e| {
        failed(format!(
            "{host:?} cannot be checked against a certificate: {e}"
        ))
    })?;
    tokio_rustls::TlsConnector::from(tls.config().clone())
        .connect(name, stream)
        .await
        .map_err(|e| failed(handshake_error(&e, host, tls)))
}

/// Why a handshake failed, in an operator's words.
fn handshake_error(e: &std::io::Error, host: &str, tls: &ClientTls) -> String {
    use rustls::{CertificateError, Error};
    let roots = tls.roots();
    let Some(rustls_error) = e.get_ref().and_then(|i| i.downcast_ref::<Error>()) else {
        return format!("the connection failed during the handshake: {e}");
    };
    match rustls_error {
        Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
            "its certificate was refused: it is not signed by a certificate authority in {roots} (give the CA's certificate with --ca-file or WEFT_CA_FILE, or ssl.client.truststore.location in ssl-client.xml)"
        ),
        Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!(
            "its certificate was refused: it is not issued for {host:?} (call the RM by a name its certificate lists)"
        ),
        Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => "its certificate was refused: it has expired".to_owned(),
        Error::InvalidCertificate(
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. },
        ) => "its certificate was refused: it is not valid yet (check both machines' clocks)".to_owned(),
        Error::InvalidCertificate(other) => {
            format!("its certificate was refused ({roots} trusted): {other:?}")
        }
        Error::InvalidMessage(_) => "it did not answer in TLS: does it serve plain HTTP (yarn.http.policy HTTP_ONLY)? Call it with http://".to_owned(),
        other => format!("{other}"),
    }
}

/// Decodes a successful JSON answer, or turns an error answer into `ClientError::Remote`.
pub fn decode<T: DeserializeOwned>(answer: &Answer) -> Result<T, ClientError> {
    if !answer.status.is_success() {
        return Err(remote_error(answer));
    }
    serde_json::from_slice(&answer.body).map_err(|e| ClientError::Unexpected {
        status: answer.status,
        why: format!("cannot decode the answer: {e}"),
    })
}

/// The error an unsuccessful answer carries.
pub fn remote_error(answer: &Answer) -> ClientError {
    #[derive(serde::Deserialize)]
    struct Wrapper {
        #[serde(rename = "RemoteException")]
        remote_exception: RemoteException,
    }
    match serde_json::from_slice::<Wrapper>(&answer.body) {
        Ok(w) => ClientError::Remote {
            status: answer.status,
            exception: w.remote_exception,
        },
        Err(_) => ClientError::Unexpected {
            status: answer.status,
            why: String::from_utf8_lossy(&answer.body).into_owned(),
        },
    }
}

/// Percent-encodes a query value.
pub fn encode_query(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_port_is_the_rm_web_port() {
        let authority = |url: &str| RmClient::new(url, None).unwrap().authority().to_owned();
        assert_eq!(authority("http://localhost:8088"), "localhost:8088");
        // No port: YARN's RM web port, as `--rm rm1` means, not HTTP's 80.
        assert_eq!(authority("http://rm/"), "rm:8088");
        assert_eq!(authority("http://rm"), "rm:8088");
        assert_eq!(authority("rm"), "rm:8088");
        assert_eq!(authority("HTTP://rm.example.com"), "rm.example.com:8088");
        assert_eq!(authority("10.0.0.7"), "10.0.0.7:8088");
        assert_eq!(authority("[::1]"), "[::1]:8088");
        // An explicit port is kept, 80 included.
        assert_eq!(authority("http://rm:80"), "rm:80");
        assert_eq!(authority("rm:80/"), "rm:80");
        assert_eq!(authority("http://[::1]:9000"), "[::1]:9000");
        // HTTPS without a port: the RM's HTTPS web port.
        assert_eq!(authority("https://rm"), "rm:8090");
        assert_eq!(authority("HTTPS://rm:443/"), "rm:443");
        assert!(RmClient::new("https://rm", None).unwrap().is_https());
        assert!(!RmClient::new("rm:8090", None).unwrap().is_https());
    }

    #[test]
    fn bad_addresses_say_what_is_wrong() {
        let why = |url: &str| match RmClient::new(url, None) {
            Err(ClientError::InvalidUrl { why, .. }) => why,
            other => panic!("{url} gives {other:?}"),
        };
        assert_eq!(
            why("ftp://rm:8090"),
            "only http:// and https:// are supported, not ftp://"
        );
        assert_eq!(why(""), "it is empty");
        assert_eq!(why(" rm"), "it has spaces around it");
        assert_eq!(why("http://"), "no host");
        assert_eq!(why("http://:8088"), "no host");
        assert_eq!(why("rm:"), "port \"\" is not a number from 1 to 65535");
        assert_eq!(why("rm:0"), "port \"0\" is not a number from 1 to 65535");
        assert_eq!(
            why("rm:65536"),
            "port \"65536\" is not a number from 1 to 65535"
        );
        assert_eq!(
            why("rm:+80"),
            "port \"+80\" is not a number from 1 to 65535"
        );
        assert_eq!(
            why("rm:http"),
            "port \"http\" is not a number from 1 to 65535"
        );
        assert_eq!(
            why("http://rm:8088/ws/v1"),
            "\"/ws/v1\" after the host: give only the host and port"
        );
        assert_eq!(
            why("rm?x=1"),
            "\"?x=1\" after the host: give only the host and port"
        );
        assert_eq!(
            why("http://u@rm"),
            "user information (user@) is not supported"
        );
        assert_eq!(
            why("::1"),
            "an IPv6 address must be in brackets, as http://[::1]:8088"
        );
        assert_eq!(why("[::1"), "an IPv6 address has no closing ]");
        assert_eq!(why("r m"), "\"r m\" is not a host name or address");
        let e = RmClient::new("rm:x", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid resource manager address \"rm:x\": port \"x\" is not a number from 1 to 65535"
        );
    }

    /// A listener that accepts every connection and never answers on any,
    /// as an RM stopped by SIGSTOP does (the kernel still accepts for it),
    /// and how many connections it has accepted.
    async fn silent_rm() -> (String, tokio::sync::watch::Receiver<usize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (accepted, n_accepted) = tokio::sync::watch::channel(0);
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
                accepted.send_replace(held.len());
            }
        });
        (addr, n_accepted)
    }

    #[tokio::test]
    async fn a_request_the_rm_never_answers_times_out() {
        let (addr, mut n_accepted) = silent_rm().await;
        let mut client = RmClient::new(&addr, None)
            .unwrap()
            .with_timeout(Duration::from_millis(200));
        let test = async {
            for _ in 0..2 {
                let e = client
                    .get::<serde_json::Value>("/ws/v1/cluster/info")
                    .await
                    .unwrap_err();
                assert!(matches!(e, ClientError::Timeout { .. }), "{e:?}");
                assert_eq!(
                    e.to_string(),
                    format!("the resource manager at {addr} did not answer within 200 ms")
                );
            }
            // The second call went on a new connection rather than queueing
            // behind the first one's unanswered request.
            n_accepted.wait_for(|n| *n == 2).await.unwrap();
        };
        tokio::time::timeout(Duration::from_secs(30), test)
            .await
            .expect("the client's own timeout ends each call");
    }

    #[test]
    fn users_are_percent_encoded() {
        let c = RmClient::new("http://rm:1", Some("a b&c".into())).unwrap();
        assert_eq!(c.path_with_user("/x?y=1"), "/x?y=1&user.name=a%20b%26c");
    }
}
