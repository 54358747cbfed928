//! Test fixtures shared by this crate's tests: a small configuration, a
//! running service on a pinned clock whose users' groups come from a fake
//! name service (so no test depends on who exists on the machine) and a
//! logging filter that is only its directives (`DirectivesOnly`), and a
//! `call` helper that sends one request through the router
//! (`tower::ServiceExt::oneshot`) and returns status, headers and body.
//!
//! Tests run on tokio's paused clock, so the core's time only moves when a
//! test advances it (or when every task is idle).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;

use crate::clock::Clock;
use crate::config::RmConfig;
use crate::groups::{GroupLookup, LookupError};
use crate::log_levels::DirectivesOnly;
use crate::server::{Embedding, Service};

/// The epoch origin tests pin, so ids are `application_1700000000000_NNNN`.
pub(crate) const EPOCH: u64 = 1_700_000_000_000;

/// Two weighted leaves with ACLs, an open leaf, a parent, and strict placement.
pub(crate) const ALLOC: &str = r#"<allocations>
  <queue name="root">
    <aclSubmitApps> </aclSubmitApps>
    <aclAdministerApps>yarn</aclAdministerApps>
    <queue name="a"><weight>3</weight><aclSubmitApps>alice,bob</aclSubmitApps></queue>
    <queue name="b"><weight>1</weight><aclSubmitApps>*</aclSubmitApps></queue>
    <queue name="p" type="parent"><aclSubmitApps>*</aclSubmitApps></queue>
    <queue name="default"><aclSubmitApps>*</aclSubmitApps></queue>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="reject"/>
  </queuePlacementPolicy>
</allocations>"#;

/// A site file with the given extra properties.
pub(crate) fn site(extra: &[(&str, &str)]) -> String {
    let mut props = vec![
        ("yarn.acl.enable", "true"),
        ("yarn.admin.acl", "yarn"),
        ("yarn.scheduler.minimum-allocation-mb", "1024"),
        ("yarn.scheduler.maximum-allocation-mb", "8192"),
        ("yarn.scheduler.maximum-allocation-vcores", "8"),
        ("weft.rm.view-refresh-ms", "0"),
        ("weft.rm.max-request-bytes", "4096"),
    ];
    props.extend_from_slice(extra);
    weft_test_support::site_xml(&props)
}

/// A service on the test configuration (plus `extra` site properties).
pub(crate) fn service(extra: &[(&str, &str)]) -> Service {
    service_at(extra, EPOCH)
}

/// A service as `service` makes, whose clock shows `epoch_origin_ms` at
/// its start: an RM restarted that long after `EPOCH`.
pub(crate) fn service_at(extra: &[(&str, &str)], epoch_origin_ms: u64) -> Service {
    let config = RmConfig::from_texts(&site(extra), ALLOC).expect("the test configuration loads");
    start(config, epoch_origin_ms, FakeGroups::with(&[]))
}

/// A service on `config` whose clock shows `epoch_origin_ms` at its start,
/// with `groups` standing in for the operating system's name service.
pub(crate) fn start(config: RmConfig, epoch_origin_ms: u64, groups: Arc<FakeGroups>) -> Service {
    Service::start_with(
        config,
        Clock::with_epoch_origin(epoch_origin_ms),
        Embedding {
            groups,
            log_levels: Some(Arc::new(DirectivesOnly::new("info"))),
        },
    )
    .expect("the service starts")
}

/// A name service that knows only the users a test gives it, counting the
/// lookups made.
#[derive(Debug, Default)]
pub(crate) struct FakeGroups {
    by_user: Mutex<BTreeMap<String, Vec<String>>>,
    calls: AtomicUsize,
}

impl FakeGroups {
    /// A name service knowing `users` with their groups, primary first.
    pub(crate) fn with(users: &[(&str, &[&str])]) -> Arc<FakeGroups> {
        let fake = FakeGroups::default();
        for (user, groups) in users {
            fake.set(user, groups);
        }
        Arc::new(fake)
    }

    /// Puts `user` in `groups` from now on.
    pub(crate) fn set(&self, user: &str, groups: &[&str]) {
        self.by_user.lock().unwrap().insert(
            user.to_owned(),
            groups.iter().map(|g| (*g).to_owned()).collect(),
        );
    }

    /// How many lookups were made.
    pub(crate) fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl GroupLookup for FakeGroups {
    fn lookup(&self, user: &str) -> Result<Option<Vec<String>>, LookupError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(self.by_user.lock().unwrap().get(user).cloned())
    }
}

/// One answer.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: String,
}

impl Answer {
    /// The body as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// `status message` of an error answer, for compact assertions.
    pub(crate) fn error(&self) -> String {
        let v = self.json();
        let e = &v["RemoteException"];
        format!(
            "{} {}: {}",
            self.status.as_u16(),
            e["exception"].as_str().unwrap_or("?"),
            e["message"].as_str().unwrap_or("?")
        )
    }
}

/// Sends one request through `router`.
pub(crate) async fn call(
    router: &Router,
    method: Method,
    uri: &str,
    content_type: Option<&str>,
    body: &str,
    headers: &[(&str, &str)],
) -> Answer {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = router
        .clone()
        .oneshot(req.body(Body::from(body.to_owned())).unwrap())
        .await
        .unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// `GET uri`.
pub(crate) async fn get(router: &Router, uri: &str) -> Answer {
    call(router, Method::GET, uri, None, "", &[]).await
}

/// `POST uri` with a JSON body.
pub(crate) async fn post(router: &Router, uri: &str, body: serde_json::Value) -> Answer {
    call(
        router,
        Method::POST,
        uri,
        Some("application/json"),
        &body.to_string(),
        &[],
    )
    .await
}

/// `PUT uri` with a JSON body.
pub(crate) async fn put(router: &Router, uri: &str, body: serde_json::Value) -> Answer {
    call(
        router,
        Method::PUT,
        uri,
        Some("application/json"),
        &body.to_string(),
        &[],
    )
    .await
}
