//! The RM under `yarn.http.policy` HTTPS_ONLY, from the outside: a
//! configuration directory with `ssl-server.xml` and PEM files made at test
//! time, the service served on `127.0.0.1:0`, and the crate's own client
//! trusting the test CA, another CA, or calling plain HTTP.
//!
//! These run on tokio's real clock: a paused clock jumps ahead while the
//! runtime waits on a socket, which would time handshakes out at once. No
//! test sleeps.

use std::time::Duration;

use http::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use weft_rm::client::{ClientError, RmClient};
use weft_rm::tls::ClientTls;
use weft_rm::{Clock, RmConfig, Service};
use weft_test_support::ScratchDir;
use weft_test_support::tls::TestPki;

const ALLOC: &str = r#"<allocations>
  <queue name="a"/>
  <queuePlacementPolicy><rule name="specified" create="false"/><rule name="reject"/></queuePlacementPolicy>
</allocations>"#;

/// A configuration directory for an RM serving HTTPS, removed when dropped.
fn conf_dir(name: &str) -> ScratchDir {
    let dir = ScratchDir::new(&format!("https-{name}"));
    dir.write("fair-scheduler.xml", ALLOC);
    dir.write(
        "weft-site.xml",
        weft_test_support::site_xml(&[
            ("yarn.http.policy", "HTTPS_ONLY"),
            ("weft.rm.view-refresh-ms", "0"),
        ]),
    );
    dir
}

/// An RM serving HTTPS with `pki`'s certificate, its address, and how to stop it.
struct Server {
    addr: String,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), weft_rm::ServeError>>,
    dir: ScratchDir,
}

async fn serve(name: &str, pki: &TestPki) -> Server {
    let dir = conf_dir(name);
    pki.write_conf(dir.path());
    let config = RmConfig::load(Some(dir.path())).unwrap();
    assert!(config.tls.is_some());
    let service = Service::start(config, Clock::with_epoch_origin(1_700_000_000_000)).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(service.serve(listener, async move {
        let _ = stopped.await;
    }));
    Server {
        addr,
        stop,
        task,
        dir,
    }
}

impl Server {
    fn ca(&self) -> ClientTls {
        ClientTls::from_ca_file(&self.dir.path().join("ca.pem"), "the test").unwrap()
    }

    fn client(&self, host: &str) -> RmClient {
        let port = self.addr.rsplit_once(':').unwrap().1;
        RmClient::new(&format!("https://{host}:{port}"), Some("alice".to_owned()))
            .unwrap()
            .with_tls(self.ca())
            .with_timeout(Duration::from_secs(20))
    }

    async fn shutdown(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn an_https_rm_answers_a_client_that_trusts_its_ca() {
    let pki = TestPki::new("Weft test CA");
    let rm = serve("trusted", &pki).await;
    // By name and by address: the certificate lists both.
    for host in ["localhost", "127.0.0.1"] {
        let mut c = rm.client(host);
        let info: Value = c.get("/ws/v1/cluster/info").await.unwrap();
        assert_eq!(info["clusterInfo"]["state"], "STARTED", "{info}");
        // The one connection is kept alive across calls.
        let _: Value = c.get("/ws/v1/cluster/metrics").await.unwrap();
    }
    // The app's Location carries the scheme it was submitted over.
    let mut c = rm.client("localhost");
    let app = c.new_application().await.unwrap().application_id;
    let answer = c
        .request(
            Method::POST,
            "/ws/v1/cluster/apps",
            Some(
                serde_json::to_vec(&json!({
                    "application-id": app, "application-name": "tls", "queue": "root.a",
                    "am-container-spec": {"commands": {"command": "true"}},
                    "resource": {"memory": 1024, "vCores": 1}
                }))
                .unwrap(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    let port = rm.addr.rsplit_once(':').unwrap().1;
    assert_eq!(
        answer.location.as_deref(),
        Some(format!("https://localhost:{port}/ws/v1/cluster/apps/{app}").as_str())
    );
    rm.shutdown().await;
}

#[tokio::test]
async fn a_client_that_does_not_trust_the_ca_is_told_why() {
    let pki = TestPki::new("Weft test CA");
    let rm = serve("untrusted", &pki).await;
    let other = TestPki::new("Another CA");
    let dir = conf_dir("other-ca");
    std::fs::write(dir.path().join("other.pem"), &other.ca_pem).unwrap();
    let other_ca = ClientTls::from_ca_file(&dir.path().join("other.pem"), "--ca-file").unwrap();
    let mut c = RmClient::new(&format!("https://{}", rm.addr), None)
        .unwrap()
        .with_tls(other_ca)
        .with_timeout(Duration::from_secs(20));
    let e = c.get::<Value>("/ws/v1/cluster/info").await.unwrap_err();
    assert!(matches!(e, ClientError::Tls { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "TLS with the resource manager at {} failed: its certificate was refused: it is not signed by a certificate authority in the CA file {} (give the CA's certificate with --ca-file or WEFT_CA_FILE, or ssl.client.truststore.location in ssl-client.xml)",
            rm.addr,
            dir.path().join("other.pem").display()
        )
    );
    // The server went on serving those who trust it.
    let _: Value = rm
        .client("localhost")
        .get("/ws/v1/cluster/info")
        .await
        .unwrap();
    rm.shutdown().await;
}

#[tokio::test]
async fn a_plain_http_client_on_the_https_port_is_told_to_use_https() {
    let pki = TestPki::new("Weft test CA");
    let rm = serve("plain", &pki).await;
    let mut c = RmClient::new(&format!("http://{}", rm.addr), None)
        .unwrap()
        .with_timeout(Duration::from_secs(20));
    let e = c.get::<Value>("/ws/v1/cluster/info").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "unexpected answer from the resource manager (400 Bad Request): This server speaks HTTPS only (yarn.http.policy is HTTPS_ONLY): call it with https://\n"
    );
    rm.shutdown().await;
}

#[tokio::test]
async fn an_https_client_on_a_plain_http_rm_is_told_so() {
    let config = RmConfig::from_texts(
        &weft_test_support::site_xml(&[("weft.rm.view-refresh-ms", "0")]),
        ALLOC,
    )
    .unwrap();
    let service = Service::start(config, Clock::with_epoch_origin(1_700_000_000_000)).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(service.serve(listener, async move {
        let _ = stopped.await;
    }));
    let pki = TestPki::new("Weft test CA");
    let dir = conf_dir("plain-rm");
    pki.write_conf(dir.path());
    let mut c = RmClient::new(&format!("https://{addr}"), None)
        .unwrap()
        .with_tls(ClientTls::from_ca_file(&dir.path().join("ca.pem"), "the test").unwrap())
        .with_timeout(Duration::from_secs(20));
    let e = c.get::<Value>("/ws/v1/cluster/info").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "TLS with the resource manager at {addr} failed: it did not answer in TLS: does it serve plain HTTP (yarn.http.policy HTTP_ONLY)? Call it with http://"
        )
    );
    let _ = stop.send(());
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_stalled_handshake_holds_up_no_one_else() {
    let pki = TestPki::new("Weft test CA");
    let rm = serve("stalled", &pki).await;
    // Connections that never finish (or never start) their handshake...
    let mut idle = TcpStream::connect(&rm.addr).await.unwrap();
    let _silent = TcpStream::connect(&rm.addr).await.unwrap();
    // The first byte of a TLS handshake record, and nothing more.
    idle.write_all(&[22]).await.unwrap();
    // ...and garbage, which fails its handshake at once.
    let mut garbage = TcpStream::connect(&rm.addr).await.unwrap();
    garbage.write_all(&[22, 0, 0, 0, 0, 0, 0]).await.unwrap();
    // ...do not keep a client that trusts the RM from being answered.
    let mut c = rm.client("localhost");
    let info: Value = c.get("/ws/v1/cluster/info").await.unwrap();
    assert_eq!(info["clusterInfo"]["state"], "STARTED");
    // Shutting down does not wait for them either.
    rm.shutdown().await;
}
