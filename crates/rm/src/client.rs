//! A small HTTP/1.1 client for Weft's API: one kept-alive connection to the
//! RM, JSON in and out, `?user.name=` added for the caller, and Hadoop's
//! `RemoteException` turned back into a typed error.
//!
//! The `weft` command's YARN-style subcommands (`cli`) and the load
//! generator (`load`) use it; it knows paths and bodies, not what they mean.

use bytes::Bytes;
use http::{Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpStream;

use crate::dto::apps::NewApplicationDto;
use crate::http::error::RemoteException;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The RM's address is not `http://host:port`.
    #[error("invalid resource manager address {url:?}: {why}")]
    InvalidUrl {
        /// The address given.
        url: String,
        /// What is wrong.
        why: &'static str,
    },
    /// No connection.
    #[error("cannot connect to the resource manager at {addr}: {source}")]
    Connect {
        /// `host:port`.
        addr: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The connection broke.
    #[error("HTTP exchange with the resource manager failed: {0}")]
    Http(#[from] hyper::Error),
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

/// A client for one RM.
pub struct RmClient {
    authority: String,
    user: Option<String>,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl std::fmt::Debug for RmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RmClient")
            .field("authority", &self.authority)
            .field("user", &self.user)
            .finish()
    }
}

impl RmClient {
    /// A client for the RM at `url` (`http://host:port`), calling as `user`.
    pub fn new(url: &str, user: Option<String>) -> Result<RmClient, ClientError> {
        let invalid = |why| ClientError::InvalidUrl {
            url: url.to_owned(),
            why,
        };
        let uri: Uri = url.parse().map_err(|_| invalid("not a URL"))?;
        match uri.scheme_str() {
            Some("http") | None => {}
            Some(_) => return Err(invalid("only http:// is supported")),
        }
        let authority = uri.authority().ok_or_else(|| invalid("no host"))?;
        let port = authority.port_u16().unwrap_or(80);
        Ok(RmClient {
            authority: format!("{}:{port}", authority.host()),
            user,
            sender: None,
        })
    }

    /// The `host:port` called.
    pub fn authority(&self) -> &str {
        &self.authority
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
            let (sender, conn) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
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
        let uri = self.path_with_user(path);
        let authority = self.authority.clone();
        let build = |body: Option<Vec<u8>>| {
            let mut b = Request::builder()
                .method(method.clone())
                .uri(uri.as_str())
                .header(header::HOST, authority.as_str())
                .header(header::ACCEPT, "application/json");
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
    fn urls_are_checked() {
        assert_eq!(
            RmClient::new("http://localhost:8088", None)
                .unwrap()
                .authority(),
            "localhost:8088"
        );
        assert_eq!(
            RmClient::new("http://rm/", None).unwrap().authority(),
            "rm:80"
        );
        assert!(matches!(
            RmClient::new("https://rm:8090", None),
            Err(ClientError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn users_are_percent_encoded() {
        let c = RmClient::new("http://rm:1", Some("a b&c".into())).unwrap();
        assert_eq!(c.path_with_user("/x?y=1"), "/x?y=1&user.name=a%20b%26c");
    }
}
