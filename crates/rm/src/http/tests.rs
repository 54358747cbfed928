//! Router tests: every endpoint through `oneshot` against the router, with
//! the good path and every bad input a client can send (malformed JSON,
//! wrong or missing content type, oversized bodies, unknown or malformed
//! ids, out-of-sequence `responseId`s, invalid state changes, ACL denials).

use axum::Router;
use axum::http::{Method, StatusCode};
use expect_test::expect;
use serde_json::{Value, json};

use crate::server::Service;
use crate::testing::{self, Answer, call, get, post, put};

struct Rm {
    service: Service,
    router: Router,
    /// The AM token of each app's AM container, as the heartbeat answers
    /// that gave the containers carried them: the harness plays the node
    /// that hands the token to the AM it launches.
    am_tokens: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
    /// The `Authorization` value the harness's nodes show, for an RM with a
    /// node secret.
    node_auth: Option<String>,
}

/// A directory of a test's own (configuration, hosts files), removed at the end.
struct TestDir(std::path::PathBuf);

/// The node secret of `Rm::with_node_secret`.
const NODE_SECRET: &str = "5ec7e75ec7e75ec7e75ec7e75ec7e75e";

impl TestDir {
    /// An empty directory no other `TestDir` of this process has, for
    /// helpers that many tests (and property-test cases) call at once.
    fn unique(name: &str) -> TestDir {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        TestDir::new(&format!("{name}-{n}"))
    }

    /// Writes `file` readable by its owner only, as a secret must be, and
    /// returns its path as text.
    fn write_private(&self, file: &str, text: &str) -> String {
        use std::os::unix::fs::PermissionsExt as _;
        let path = self.write(file, text);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        path
    }

    /// An empty directory.
    fn new(name: &str) -> TestDir {
        let dir = std::env::temp_dir().join(format!("weft-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TestDir(dir)
    }

    /// A configuration directory with the test configuration's site and
    /// allocation files, for a service started from it (`start`).
    fn conf(name: &str) -> TestDir {
        let dir = TestDir::new(name);
        dir.write(crate::config::SITE_FILE_NAME, &testing::site(&[]));
        dir.write("fair-scheduler.xml", testing::ALLOC);
        dir
    }

    /// Writes `file` and returns its path as text.
    fn write(&self, file: &str, text: &str) -> String {
        let path = self.0.join(file);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    fn path(&self, file: &str) -> std::path::PathBuf {
        self.0.join(file)
    }

    /// A service started from this directory, as `weft rm --conf DIR`
    /// starts, so the refreshes that read files again have it to read.
    fn start(&self) -> Rm {
        self.start_with(testing::FakeGroups::with(&[]))
    }

    /// As `start`, with `groups` as the operating system's name service.
    fn start_with(&self, groups: std::sync::Arc<testing::FakeGroups>) -> Rm {
        let config = crate::config::RmConfig::load(Some(&self.0)).expect("the configuration loads");
        let service = testing::start(config, testing::EPOCH, groups);
        Rm::around(service)
    }

    /// `text` with this directory written `<dir>`.
    fn hide(&self, text: &str) -> String {
        text.replace(&self.0.display().to_string(), "<dir>")
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Rm {
    fn new() -> Rm {
        Rm::with(&[])
    }

    fn with(extra: &[(&str, &str)]) -> Rm {
        Rm::around(testing::service(extra))
    }

    fn around(service: Service) -> Rm {
        let router = service.router();
        Rm {
            service,
            router,
            am_tokens: Default::default(),
            node_auth: None,
        }
    }

    /// The test service with a node secret (`NODE_SECRET`), whose nodes
    /// (`register`, `heartbeat`) show it.
    fn with_node_secret() -> Rm {
        let dir = TestDir::unique("node-secret");
        let path = dir.write_private("node.secret", &format!("{NODE_SECRET}\n"));
        let site = testing::site(&[("weft.nm.secret.file", &path)]);
        let config = crate::config::RmConfig::from_texts(&site, testing::ALLOC)
            .expect("the configuration with a node secret loads");
        let mut rm = Rm::around(testing::start(
            config,
            testing::EPOCH,
            testing::FakeGroups::with(&[]),
        ));
        rm.node_auth = Some(format!("Bearer {NODE_SECRET}"));
        rm
    }

    /// `POST path` as one of the harness's nodes.
    async fn node_post(&self, path: &str, body: Value) -> Answer {
        let headers: Vec<(&str, &str)> = self
            .node_auth
            .as_deref()
            .map(|a| ("authorization", a))
            .into_iter()
            .collect();
        call(
            &self.router,
            Method::POST,
            path,
            Some("application/json"),
            &body.to_string(),
            &headers,
        )
        .await
    }

    /// Keeps the AM tokens a heartbeat answer carries with AM containers.
    fn remember_am_tokens(&self, answer: &Answer) {
        if answer.status != StatusCode::OK {
            return;
        }
        let v = answer.json();
        let Some(list) = v["allocatedContainers"].as_array() else {
            return;
        };
        for c in list {
            if let (Some(app), Some(token)) = (c["applicationId"].as_str(), c["amRMToken"].as_str())
            {
                self.am_tokens
                    .lock()
                    .unwrap()
                    .insert(app.to_owned(), token.to_owned());
            }
        }
    }

    /// The AM token the harness holds for `app`'s AM (as its node gave it).
    fn am_token(&self, app: &str) -> String {
        self.am_tokens
            .lock()
            .unwrap()
            .get(app)
            .cloned()
            .unwrap_or_else(|| panic!("no AM container of {app} was handed to a node"))
    }

    /// `POST /ws/v1/am/{app}/{call}` as `app`'s AM, showing its token.
    async fn am(&self, app: &str, call: &str, body: Value) -> Answer {
        let token = self.am_token(app);
        self.am_with(app, call, body, Some(&token)).await
    }

    /// `POST /ws/v1/am/{app}/{call}` showing `token` (`None`: no
    /// `Authorization` header).
    async fn am_with(&self, app: &str, call: &str, body: Value, token: Option<&str>) -> Answer {
        let auth = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = auth
            .as_deref()
            .map(|a| ("authorization", a))
            .into_iter()
            .collect();
        testing::call(
            &self.router,
            Method::POST,
            &format!("/ws/v1/am/{app}/{call}"),
            Some("application/json"),
            &body.to_string(),
            &headers,
        )
        .await
    }

    async fn register(&self, node: &str, memory: u64, vcores: u64) -> Answer {
        self.node_post(
            "/ws/v1/nm/register",
            json!({"nodeId": node, "rack": "/r1", "capability": {"memory": memory, "vCores": vcores}}),
        )
        .await
    }

    async fn heartbeat(&self, node: &str, response_id: u64, containers: Value) -> Answer {
        let a = self
            .node_post(
                "/ws/v1/nm/heartbeat",
                json!({"nodeId": node, "responseId": response_id, "containers": containers}),
            )
            .await;
        self.remember_am_tokens(&a);
        a
    }

    async fn new_app(&self, user: &str) -> String {
        let a = call(
            &self.router,
            Method::POST,
            &format!("/ws/v1/cluster/apps/new-application?user.name={user}"),
            None,
            "",
            &[],
        )
        .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        a.json()["application-id"].as_str().unwrap().to_owned()
    }

    async fn submit_to(&self, user: &str, app: &str, queue: &str) -> Answer {
        post(
            &self.router,
            &format!("/ws/v1/cluster/apps?user.name={user}"),
            json!({"application-id": app, "application-name": "job", "queue": queue,
                   "resource": {"memory": 1024, "vCores": 1},
                   "am-container-spec": {"commands": {"command": "run-am"}}}),
        )
        .await
    }

    /// A new app submitted by `user` to `queue`, accepted.
    async fn submit(&self, user: &str, queue: &str) -> String {
        let app = self.new_app(user).await;
        let a = self.submit_to(user, &app, queue).await;
        assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
        app
    }

    /// A running app: submitted, its AM container placed on `node` (which
    /// must be registered and at `response_id`), its AM registered.
    async fn running(&self, user: &str, queue: &str, node: &str, response_id: u64) -> String {
        let app = self.submit(user, queue).await;
        let hb = self.heartbeat(node, response_id, json!([])).await;
        assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
        let reg = self.am(&app, "register", json!({})).await;
        assert_eq!(reg.status, StatusCode::OK, "{}", reg.body);
        app
    }

    /// alice's app in `root.b` on a fresh node h1, submitted with the
    /// `extra` fields over a 1 GB AM that runs `run-am` with these
    /// `application-acls`, its AM container placed and its AM registered
    /// from `am-host` (RPC 7001, tracking `http://am-host:7002/`), asking
    /// for `count` containers of `mb` MB. Returns the app id.
    async fn alices_registered_app(
        &self,
        acls: Value,
        extra: Value,
        count: u32,
        mb: u64,
    ) -> String {
        self.register("h1:8041", 8192, 8).await;
        let app = self.new_app("alice").await;
        let mut body = json!({"application-id": app, "queue": "b",
               "resource": {"memory": 1024, "vCores": 1},
               "am-container-spec": {"commands": {"command": "run-am"}, "application-acls": acls}});
        for (k, v) in extra.as_object().expect("extra fields are an object") {
            body[k] = v.clone();
        }
        let a = post(&self.router, "/ws/v1/cluster/apps?user.name=alice", body).await;
        assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
        let hb = self.heartbeat("h1:8041", 0, json!([])).await;
        assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
        let reg = self
            .am(
                &app,
                "register",
                json!({"host": "am-host", "rpcPort": 7001, "trackingUrl": "http://am-host:7002/"}),
            )
            .await;
        assert_eq!(reg.status, StatusCode::OK, "{}", reg.body);
        let ask = json!({"responseId": 0, "asks": [{"priority": 1, "resourceName": "*",
            "capability": {"memory": mb, "vCores": 1}, "numContainers": count}]});
        assert_eq!(self.allocate(&app, ask).await.status, StatusCode::OK);
        app
    }

    /// `user` asks to kill `app`.
    async fn kill(&self, app: &str, user: &str) -> Answer {
        put(
            &self.router,
            &format!("/ws/v1/cluster/apps/{app}/state?user.name={user}"),
            json!({"state": "KILLED"}),
        )
        .await
    }

    async fn allocate(&self, app: &str, body: Value) -> Answer {
        self.am(app, "allocate", body).await
    }

    async fn stop(self) {
        self.service.stop().await;
    }
}

/// `body` with every container and AM token replaced by `<token>`, after
/// checking each is 32 lowercase hex digits (their values are random).
fn hide_tokens(body: &str) -> String {
    let containers = hide_tokens_at(body, r#""containerToken":""#);
    hide_tokens_at(&containers, r#""amRMToken":""#)
}

fn hide_tokens_at(body: &str, key: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find(key) {
        let (head, tail) = rest.split_at(at + key.len());
        let token = &tail[..32];
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{token}"
        );
        assert_eq!(&tail[32..33], "\"");
        out.push_str(head);
        out.push_str("<token>");
        rest = &tail[32..];
    }
    out.push_str(rest);
    out
}

/// Each container's token in an answer's list of containers.
fn tokens(list: &Value) -> Vec<(String, String)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["containerId"].as_str().unwrap().to_owned(),
                c["containerToken"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn cluster_info_in_json_and_xml() {
    let rm = Rm::new();
    let a = get(&rm.router, "/ws/v1/cluster/info").await;
    assert_eq!(a.status, StatusCode::OK);
    let v = a.json();
    assert_eq!(v["clusterInfo"]["id"], json!(testing::EPOCH));
    assert_eq!(v["clusterInfo"]["state"], "STARTED");
    assert_eq!(v["clusterInfo"]["haState"], "ACTIVE");
    let same = get(&rm.router, "/ws/v1/cluster").await;
    assert_eq!(same.body, a.body);
    let xml = call(
        &rm.router,
        Method::GET,
        "/ws/v1/cluster/info",
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert_eq!(xml.headers["content-type"], "application/xml");
    assert!(
        xml.body.contains("<clusterInfo><id>1700000000000</id><startedOn>1700000000000</startedOn><state>STARTED</state>"),
        "{}",
        xml.body
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn node_registration_and_its_bad_inputs() {
    let rm = Rm::new();
    let ok = rm.register("h1:8041", 8192, 8).await;
    assert_eq!(ok.status, StatusCode::OK);
    expect![[r#"{"nodeAction":"NORMAL","nodeId":"h1:8041","rmIdentifier":1700000000000,"resourceManagerVersion":"0.1.0","heartbeatIntervalMs":1000,"responseId":0}"#]]
        .assert_eq(&ok.body);

    let r = &rm.router;
    let cases: Vec<(Option<&str>, String)> = vec![
        (Some("application/json"), "{\"nodeId\": ".to_owned()),
        (Some("application/json"), "".to_owned()),
        (Some("application/json"), r#"{"nodeId":"h2:1"}"#.to_owned()),
        (Some("application/json"), r#"{"nodeId":"nope","capability":{"memory":1,"vCores":1}}"#.to_owned()),
        (Some("application/json"), r#"{"nodeId":"h2:1","capability":{"memory":-5,"vCores":1}}"#.to_owned()),
        (Some("application/json"), r#"{"nodeId":"h2:1","capability":{"memory":512,"vCores":1}}"#.to_owned()),
        (Some("application/json"), r#"{"nodeId":"h2:1","capability":{"memory":8192,"vCores":8},"containers":[{"containerId":"c1","resource":{"memory":1,"vCores":1}}]}"#.to_owned()),
        (Some("text/plain"), r#"{"nodeId":"h2:1"}"#.to_owned()),
        (None, r#"{"nodeId":"h2:1"}"#.to_owned()),
        (Some("application/json"), format!(r#"{{"nodeId":"h2:1","rack":"{}"}}"#, "x".repeat(5000))),
    ];
    let mut rendered = String::new();
    for (ct, body) in cases {
        let a = call(r, Method::POST, "/ws/v1/nm/register", ct, &body, &[]).await;
        rendered.push_str(&a.error());
        rendered.push('\n');
    }
    expect![[r#"
        400 BadRequestException: the body is not valid JSON: EOF while parsing a value at line 1 column 11
        400 BadRequestException: the request body is empty
        400 BadRequestException: the JSON body does not match the expected fields: missing field `capability` at line 1 column 17
        400 BadRequestException: nodeId: invalid node id "nope": expected host:port
        400 BadRequestException: the JSON body does not match the expected fields: invalid value: integer `-5`, expected u64 at line 1 column 42
        400 BadRequestException: node h2:1 offers <memory:512, vCores:1>, which is not a usable capability: a node must offer at least the minimum allocation of memory and vcores
        400 BadRequestException: containers[0].containerId: invalid container id "c1": expected container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<sequence>
        415 NotSupportedException: Content-Type "text/plain" is not supported; send application/json or application/xml
        415 NotSupportedException: the request has a body but no Content-Type; send application/json or application/xml
        413 WebApplicationException: the request body is larger than 4096 bytes (weft.rm.max-request-bytes)
    "#]]
    .assert_eq(&rendered);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn heartbeats_follow_the_response_id_and_repeat_answers() {
    let rm = Rm::new();
    let r = &rm.router;
    assert_eq!(
        rm.heartbeat("h1:8041", 0, json!([])).await.error(),
        "404 NotFoundException: node h1:8041 is not registered; register it first"
    );
    rm.register("h1:8041", 8192, 8).await;
    let app = rm.submit("alice", "a").await;
    // The first heartbeat places the AM container, with the submission's launch
    // context, its owner and its VIEW_APP ACL (nobody's: none was given).
    let first = rm.heartbeat("h1:8041", 0, json!([])).await;
    expect![[r#"{"responseId":1,"nodeAction":"NORMAL","nextHeartbeatIntervalMs":1000,"containersToStop":[],"allocatedContainers":[{"containerId":"container_1700000000000_0001_01_000001","applicationId":"application_1700000000000_0001","resource":{"memory":1024,"vCores":1},"priority":0,"isAM":true,"launchContext":{"commands":{"command":"run-am"}},"containerToken":"<token>","amRMToken":"<token>","user":"alice","viewAppAcl":" "}]}"#]]
        .assert_eq(&hide_tokens(&first.body));
    // A repeat gets the same answer and decides nothing new.
    let again = rm.heartbeat("h1:8041", 0, json!([])).await;
    assert_eq!(again.body, first.body);
    let m = get(r, "/ws/v1/cluster/metrics").await.json();
    assert_eq!(m["clusterMetrics"]["containersAllocated"], 1);
    // Skipping ahead or going back is refused.
    assert_eq!(
        rm.heartbeat("h1:8041", 5, json!([])).await.error(),
        "409 YarnException: node h1:8041 sent responseId 5, but the last answer it was sent has responseId 1; register the node again"
    );
    // Bad statuses are named.
    assert_eq!(
        rm.heartbeat(
            "h1:8041",
            1,
            json!([{"containerId": "container_1700000000000_0001_01_000001", "state": "DONE"}])
        )
        .await
        .error(),
        "400 BadRequestException: containers[0].state: \"DONE\" is not a container state; expected NEW, RUNNING or COMPLETE"
    );
    // The AM container completing fails the attempt; a new one is asked for.
    let done = rm
        .heartbeat(
            "h1:8041",
            1,
            json!([{"containerId": "container_1700000000000_0001_01_000001", "state": "COMPLETE", "exitStatus": 1}]),
        )
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_eq!(done.json()["responseId"], 2);
    let attempts = get(r, &format!("/ws/v1/cluster/apps/{app}/appattempts"))
        .await
        .json();
    let listed = &attempts["appAttempts"]["appAttempt"];
    assert_eq!(listed[0]["appAttemptState"], "FAILED");
    assert_eq!(listed[1]["id"], 2);
    // Re-registering starts the sequence again.
    rm.register("h1:8041", 8192, 8).await;
    assert_eq!(
        rm.heartbeat("h1:8041", 0, json!([])).await.status,
        StatusCode::OK
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn unregistration() {
    let rm = Rm::new();
    rm.register("h1:8041", 8192, 8).await;
    let a = post(
        &rm.router,
        "/ws/v1/nm/unregister",
        json!({"nodeId": "h1:8041"}),
    )
    .await;
    expect![[r#"{"nodeId":"h1:8041","state":"SHUTDOWN"}"#]].assert_eq(&a.body);
    assert_eq!(
        rm.heartbeat("h1:8041", 0, json!([])).await.status,
        StatusCode::NOT_FOUND
    );
    let again = post(
        &rm.router,
        "/ws/v1/nm/unregister",
        json!({"nodeId": "h1:8041"}),
    )
    .await;
    assert_eq!(
        again.error(),
        "404 NotFoundException: node h1:8041 is not registered; register it first"
    );
    let nodes = get(&rm.router, "/ws/v1/cluster/nodes?states=SHUTDOWN")
        .await
        .json();
    assert_eq!(nodes["nodes"]["node"][0]["state"], "SHUTDOWN");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn new_application_needs_a_user() {
    let rm = Rm::new();
    let a = call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/apps/new-application",
        None,
        "",
        &[],
    )
    .await;
    assert_eq!(
        a.error(),
        "401 AuthorizationException: Unable to obtain user name, user not authenticated: add ?user.name=<user>"
    );
    let a = call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/apps/new-application?user.name=alice",
        None,
        "",
        &[],
    )
    .await;
    expect![[r#"{"application-id":"application_1700000000000_0001","maximum-resource-capability":{"memory":8192,"vCores":8}}"#]]
        .assert_eq(&a.body);
    // A name that could forge a log line, or is absurdly long, is refused.
    for (name, why) in [
        (
            "alice%0Aroot",
            r#"user.name "alice\nroot" contains the control character '\n'"#.to_owned(),
        ),
        (
            "a%1Bb",
            r#"user.name "a\u{1b}b" contains the control character '\u{1b}'"#.to_owned(),
        ),
        (
            &"x".repeat(300),
            "user.name is 300 bytes long; at most 256 are accepted".to_owned(),
        ),
    ] {
        let a = call(
            &rm.router,
            Method::POST,
            &format!("/ws/v1/cluster/apps/new-application?user.name={name}"),
            None,
            "",
            &[],
        )
        .await;
        assert_eq!(a.error(), format!("400 BadRequestException: {why}"));
    }
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn submission_location_is_absolute() {
    let rm = Rm::new();
    let r = &rm.router;
    // With a Host header, the absolute URL Hadoop gives (scripts fetch it
    // as is); a Host that is not a plain authority is not echoed.
    for (host, location) in [
        (
            "rm.example:8088",
            "http://rm.example:8088/ws/v1/cluster/apps/",
        ),
        ("bad host/x", "/ws/v1/cluster/apps/"),
        ("me:pw@rm:8088", "/ws/v1/cluster/apps/"),
    ] {
        let id = rm.new_app("alice").await;
        let a = call(
            r,
            Method::POST,
            "/ws/v1/cluster/apps?user.name=alice",
            Some("application/json"),
            &json!({"application-id": id, "queue": "a"}).to_string(),
            &[("host", host)],
        )
        .await;
        assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
        assert_eq!(a.headers["location"], format!("{location}{id}"), "{host}");
    }
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn submission_outcomes() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = rm.new_app("alice").await;
    let ok = rm.submit_to("alice", &app, "a").await;
    assert_eq!(ok.status, StatusCode::ACCEPTED);
    // Without a Host header there is only the path to give.
    assert_eq!(ok.headers["location"], format!("/ws/v1/cluster/apps/{app}"));
    assert_eq!(ok.body, "");
    // The same id again.
    assert_eq!(
        rm.submit_to("alice", &app, "a").await.error(),
        "400 BadRequestException: application application_1700000000000_0001 already exists"
    );
    // carol may not submit to root.a: with yarn.acl.enable the refusal
    // comes before the app exists, so there is no app to show and the id
    // may be submitted again.
    let denied = rm.new_app("carol").await;
    assert_eq!(
        rm.submit_to("carol", &denied, "a").await.error(),
        "403 ForbiddenException: user carol does not have permission to submit application_1700000000000_0002 to queue root.a: denied by the ACLs (aclSubmitApps, aclAdministerApps) of queue root.a and its parents"
    );
    assert_eq!(
        get(r, &format!("/ws/v1/cluster/apps/{denied}"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        rm.submit_to("carol", &denied, "b").await.status,
        StatusCode::ACCEPTED
    );
    // Placement refusals are accepted, and the app shows FAILED (Hadoop's asynchronous rejection).
    let rejected = rm.new_app("bob").await;
    assert_eq!(
        rm.submit_to("bob", &rejected, "nosuch").await.status,
        StatusCode::ACCEPTED
    );
    let v = get(r, &format!("/ws/v1/cluster/apps/{rejected}"))
        .await
        .json();
    assert_eq!(v["app"]["state"], "FAILED");
    assert_eq!(v["app"]["finalStatus"], "FAILED");
    assert!(
        v["app"]["diagnostics"]
            .as_str()
            .unwrap()
            .contains("placement"),
        "{v}"
    );
    // A parent queue cannot take apps.
    let parent = rm.new_app("bob").await;
    assert_eq!(
        rm.submit_to("bob", &parent, "p").await.status,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        get(r, &format!("/ws/v1/cluster/apps/{parent}/state"))
            .await
            .json()["state"],
        "FAILED"
    );
    // Refused before any attempt, it never had a tracking page (Hadoop's
    // trackingUI is UNASSIGNED while there is no tracking URL).
    assert_eq!(
        get(r, &format!("/ws/v1/cluster/apps/{parent}"))
            .await
            .json()["app"]["trackingUI"],
        "UNASSIGNED"
    );
    // Nor any attempt: Hadoop starts the first only once the scheduler took the app.
    assert_eq!(
        get(r, &format!("/ws/v1/cluster/apps/{parent}/appattempts"))
            .await
            .body,
        r#"{"appAttempts":{}}"#
    );
    // Malformed submissions.
    let too_large = rm.new_app("bob").await;
    let bad = [
        json!({}),
        json!({"application-id": "app-1"}),
        json!({"application-id": app, "resource": {"memory": 0, "vCores": 0}}),
        json!({"application-id": too_large, "queue": "b", "resource": {"memory": 65536, "vCores": 1}}),
        json!({"application-id": "application_1700000000000_0098", "priority": "high"}),
    ];
    let mut rendered = String::new();
    for body in bad {
        let a = post(r, "/ws/v1/cluster/apps?user.name=bob", body).await;
        rendered.push_str(&a.error());
        rendered.push('\n');
    }
    expect![[r#"
        400 BadRequestException: application-id: missing: ask POST /ws/v1/cluster/apps/new-application for one
        400 BadRequestException: application-id: invalid application id "app-1": expected application_<clusterTimestamp>_<sequence>
        400 BadRequestException: resource: the application master's container must ask for some memory or vcores
        400 BadRequestException: application master for application_1700000000000_0005 asks for <memory:65536, vCores:1>, more than queue root.b allows (<memory:8192, vCores:8>)
        400 BadRequestException: the JSON body does not match the expected fields: invalid type: string "high", expected i32 at line 1 column 68
    "#]]
    .assert_eq(&rendered);
    // No user: 401.
    let anon = post(
        r,
        "/ws/v1/cluster/apps",
        json!({"application-id": "application_1700000000000_0097"}),
    )
    .await;
    assert_eq!(anon.status, StatusCode::UNAUTHORIZED);
    rm.stop().await;
}

/// Without `yarn.acl.enable` the queue ACLs are still checked, by the
/// scheduler, as in Hadoop: the submission is accepted and the app shows
/// FAILED with the reason.
#[tokio::test(start_paused = true)]
async fn the_schedulers_acl_refusal_is_answered_202() {
    let rm = Rm::with(&[("yarn.acl.enable", "false")]);
    let app = rm.new_app("carol").await;
    let a = rm.submit_to("carol", &app, "a").await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    let v = get(&rm.router, &format!("/ws/v1/cluster/apps/{app}"))
        .await
        .json();
    assert_eq!(
        (
            &v["app"]["state"],
            &v["app"]["finalStatus"],
            &v["app"]["diagnostics"]
        ),
        (
            &json!("FAILED"),
            &json!("FAILED"),
            &json!(
                "user carol does not have permission to submit application_1700000000000_0001 to queue root.a"
            )
        )
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn rest_submission_can_be_disabled() {
    let rm = Rm::with(&[("yarn.webapp.enable-rest-app-submissions", "false")]);
    let a = post(
        &rm.router,
        "/ws/v1/cluster/apps?user.name=alice",
        json!({"application-id": "application_1700000000000_0001"}),
    )
    .await;
    assert_eq!(
        a.error(),
        "403 ForbiddenException: App submission via REST is disabled."
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn app_reports_and_filters() {
    let rm = Rm::new();
    let r = &rm.router;
    assert_eq!(get(r, "/ws/v1/cluster/apps").await.body, r#"{"apps":{}}"#);
    rm.register("h1:8041", 8192, 8).await;
    let a1 = rm.running("alice", "a", "h1:8041", 0).await;
    let a2 = rm.submit("bob", "b").await;
    let a3 = rm.submit("bob", "b").await;
    let ids = |v: Value| -> Vec<String> {
        v["apps"]["app"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| x["id"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        ids(get(r, "/ws/v1/cluster/apps").await.json()),
        [a1.as_str(), a2.as_str(), a3.as_str()]
    );
    assert_eq!(
        ids(get(r, "/ws/v1/cluster/apps?states=running").await.json()),
        [a1.as_str()]
    );
    assert_eq!(
        ids(
            get(r, "/ws/v1/cluster/apps?state=ACCEPTED&user=bob&limit=1")
                .await
                .json()
        ),
        [a2.as_str()]
    );
    assert_eq!(
        ids(get(r, "/ws/v1/cluster/apps?queue=b").await.json()),
        [a2.as_str(), a3.as_str()]
    );
    // Repeated list parameters add up, others take their first value, and
    // a parameter given empty is not given, as in Hadoop.
    assert_eq!(
        ids(
            get(
                r,
                "/ws/v1/cluster/apps?states=RUNNING&states=ACCEPTED&user=bob&user=alice&limit=&finalStatus="
            )
            .await
            .json()
        ),
        [a2.as_str(), a3.as_str()]
    );
    assert_eq!(
        ids(
            get(r, "/ws/v1/cluster/apps?queue=root.a&finalStatus=UNDEFINED")
                .await
                .json()
        ),
        [a1.as_str()]
    );
    assert_eq!(
        ids(get(r, "/ws/v1/cluster/apps?applicationTypes=yarn,spark")
            .await
            .json()),
        [a1.as_str(), a2.as_str(), a3.as_str()]
    );
    assert!(
        ids(get(r, "/ws/v1/cluster/apps?applicationTypes=spark")
            .await
            .json())
        .is_empty()
    );
    assert!(
        ids(get(r, "/ws/v1/cluster/apps?finishedTimeBegin=1")
            .await
            .json())
        .is_empty()
    );
    assert_eq!(
        get(r, "/ws/v1/cluster/apps?states=RUNNING,SLEEPING")
            .await
            .error(),
        "400 BadRequestException: states: invalid application state \"SLEEPING\"; expected one of NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED"
    );
    assert_eq!(
        get(r, "/ws/v1/cluster/apps?limit=0").await.error(),
        "400 BadRequestException: limit: \"0\" is not a limit: expected a positive integer"
    );
    // One app in full.
    let v = get(r, &format!("/ws/v1/cluster/apps/{a1}")).await.json();
    let app = &v["app"];
    assert_eq!(app["state"], "RUNNING");
    assert_eq!(app["queue"], "root.a");
    assert_eq!(app["user"], "alice");
    assert_eq!(app["allocatedMB"], 1024);
    assert_eq!(app["runningContainers"], 1);
    assert_eq!(app["amHostHttpAddress"], "h1:8042");
    assert_eq!(app["trackingUI"], "ApplicationMaster");
    assert_eq!(app["startedTime"], json!(testing::EPOCH));
    // Unknown and malformed ids.
    assert_eq!(
        get(r, "/ws/v1/cluster/apps/application_1700000000000_0042")
            .await
            .error(),
        "404 NotFoundException: application application_1700000000000_0042 is not known"
    );
    assert_eq!(
        get(r, "/ws/v1/cluster/apps/app42").await.error(),
        "400 BadRequestException: invalid application id \"app42\": expected application_<clusterTimestamp>_<sequence>"
    );
    // The attempt.
    let at = get(r, &format!("/ws/v1/cluster/apps/{a1}/appattempts"))
        .await
        .json();
    expect![[r#"{"appAttempts":{"appAttempt":[{"appAttemptId":"appattempt_1700000000000_0001_000001","appAttemptState":"RUNNING","blacklistedNodes":"","containerId":"container_1700000000000_0001_01_000001","diagnosticsInfo":"","finishedTime":0,"id":1,"logsLink":"","nodeHttpAddress":"h1:8042","nodeId":"h1:8041","startTime":1700000000000}]}}"#]]
        .assert_eq(&at.to_string());
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn killing_apps() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = rm.submit("alice", "a").await;
    let state = format!("/ws/v1/cluster/apps/{app}/state");
    assert_eq!(get(r, &state).await.body, r#"{"state":"ACCEPTED"}"#);
    // Only KILLED is a target; the current state is accepted as a no-op.
    assert_eq!(
        put(
            r,
            &format!("{state}?user.name=alice"),
            json!({"state": "RUNNING"})
        )
        .await
        .error(),
        "400 BadRequestException: Only 'KILLED' is allowed as a target state."
    );
    assert_eq!(
        put(
            r,
            &format!("{state}?user.name=alice"),
            json!({"state": "ACCEPTED"})
        )
        .await
        .body,
        r#"{"state":"ACCEPTED"}"#
    );
    // Anonymous: 401. Someone else: 403.
    assert_eq!(
        put(r, &state, json!({"state": "KILLED"})).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        put(
            r,
            &format!("{state}?user.name=bob"),
            json!({"state": "KILLED"})
        )
        .await
        .error(),
        "403 ForbiddenException: user bob may not kill application application_1700000000000_0001 in queue root.a: only its owner, a user its MODIFY_APP ACL names, an administrator of its queue or a cluster administrator (yarn.admin.acl) may"
    );
    // The owner may; the new state is visible at once.
    let killed = put(
        r,
        &format!("{state}?user.name=alice"),
        json!({"state": "KILLED", "diagnostics": "not needed"}),
    )
    .await;
    assert_eq!(killed.body, r#"{"state":"KILLED"}"#);
    let v = get(r, &format!("/ws/v1/cluster/apps/{app}")).await.json();
    assert_eq!(v["app"]["state"], "KILLED");
    assert_eq!(v["app"]["diagnostics"], "not needed");
    // Killing an ended app answers its final state, as Hadoop does.
    assert_eq!(
        put(
            r,
            &format!("{state}?user.name=bob"),
            json!({"state": "KILLED"})
        )
        .await
        .body,
        r#"{"state":"KILLED"}"#
    );
    // The admin may kill anyone's app; XML bodies work too.
    let other = rm.submit("bob", "b").await;
    let xml = call(
        r,
        Method::PUT,
        &format!("/ws/v1/cluster/apps/{other}/state?user.name=yarn"),
        Some("application/xml"),
        "<appstate><state>KILLED</state></appstate>",
        &[("accept", "application/xml")],
    )
    .await;
    assert_eq!(xml.status, StatusCode::OK, "{}", xml.body);
    assert!(
        xml.body
            .ends_with("<appstate><state>KILLED</state></appstate>"),
        "{}",
        xml.body
    );
    // Unknown app; malformed body.
    assert_eq!(
        put(
            r,
            "/ws/v1/cluster/apps/application_1700000000000_0077/state?user.name=yarn",
            json!({"state": "KILLED"})
        )
        .await
        .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        call(
            r,
            Method::PUT,
            &format!("{state}?user.name=alice"),
            Some("application/xml"),
            "<appstate><state>",
            &[]
        )
        .await
        .status,
        StatusCode::BAD_REQUEST
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn moving_apps() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = rm.submit("alice", "a").await;
    let queue = format!("/ws/v1/cluster/apps/{app}/queue");
    assert_eq!(get(r, &queue).await.body, r#"{"queue":"root.a"}"#);
    let mv = |user: &str, to: &str| {
        let uri = format!("{queue}?user.name={user}");
        let body = json!({"queue": to});
        async move { put(r, &uri, body).await }
    };
    assert_eq!(
        mv("bob", "b").await.error(),
        "403 ForbiddenException: user bob may not move application application_1700000000000_0001 in queue root.a: only its owner, a user its MODIFY_APP ACL names, an administrator of its queue or a cluster administrator (yarn.admin.acl) may"
    );
    assert_eq!(
        mv("alice", "p").await.error(),
        "400 BadRequestException: target queue root.p not found or is not a leaf queue"
    );
    assert_eq!(
        mv("alice", "a..b").await.error(),
        "400 BadRequestException: queue: invalid queue name \"a..b\": it has an empty component (a leading, trailing or doubled '.')"
    );
    assert_eq!(mv("alice", "b").await.body, r#"{"queue":"root.b"}"#);
    assert_eq!(get(r, &queue).await.body, r#"{"queue":"root.b"}"#);
    // Back to root.a: alice may submit there, but carol (queue b is open) may not.
    let mine = rm.submit("carol", "b").await;
    assert_eq!(
        put(
            r,
            &format!("/ws/v1/cluster/apps/{mine}/queue?user.name=carol"),
            json!({"queue": "a"})
        )
        .await
        .error(),
        "403 ForbiddenException: user carol may not move application application_1700000000000_0002 in queue root.b: the user may not submit to the target queue root.a"
    );
    // An ended app cannot be moved (Hadoop's words).
    put(
        r,
        &format!("/ws/v1/cluster/apps/{app}/state?user.name=alice"),
        json!({"state": "KILLED"}),
    )
    .await;
    assert_eq!(
        mv("alice", "a").await.error(),
        "400 BadRequestException: App in KILLED state cannot be moved."
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn app_priority() {
    let rm = Rm::with(&[("yarn.cluster.max-application-priority", "10")]);
    let r = &rm.router;
    let app = rm.submit("alice", "a").await;
    let uri = format!("/ws/v1/cluster/apps/{app}/priority");
    assert_eq!(get(r, &uri).await.body, r#"{"priority":0}"#);
    assert_eq!(
        put(r, &format!("{uri}?user.name=bob"), json!({"priority": 5}))
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        put(r, &format!("{uri}?user.name=alice"), json!({"priority": 5}))
            .await
            .body,
        r#"{"priority":5}"#
    );
    assert_eq!(get(r, &uri).await.body, r#"{"priority":5}"#);
    assert_eq!(
        put(
            r,
            &format!("{uri}?user.name=alice"),
            json!({"priority": "5"})
        )
        .await
        .status,
        StatusCode::BAD_REQUEST
    );
    // Above the cap, the answer and the reports show the cap.
    assert_eq!(
        put(
            r,
            &format!("{uri}?user.name=alice"),
            json!({"priority": 64})
        )
        .await
        .body,
        r#"{"priority":10}"#
    );
    let report = get(r, &format!("/ws/v1/cluster/apps/{app}")).await.json();
    assert_eq!(report["app"]["priority"], 10);
    // Below it, any priority is kept.
    assert_eq!(
        put(
            r,
            &format!("{uri}?user.name=alice"),
            json!({"priority": -3})
        )
        .await
        .body,
        r#"{"priority":-3}"#
    );
    rm.stop().await;
}

/// Hadoop's default cap is 0, so priorities do nothing until an operator
/// raises `yarn.cluster.max-application-priority`: a submission or a change
/// above it gets 0, with no error.
#[tokio::test(start_paused = true)]
async fn app_priorities_are_capped_at_zero_by_default() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = rm.new_app("alice").await;
    let a = post(
        r,
        "/ws/v1/cluster/apps?user.name=alice",
        json!({"application-id": app, "queue": "a", "priority": 64}),
    )
    .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    let uri = format!("/ws/v1/cluster/apps/{app}/priority");
    assert_eq!(get(r, &uri).await.body, r#"{"priority":0}"#);
    assert_eq!(
        put(r, &format!("{uri}?user.name=alice"), json!({"priority": 3}))
            .await
            .body,
        r#"{"priority":0}"#
    );
    let list = get(r, "/ws/v1/cluster/apps").await.json();
    assert_eq!(list["apps"]["app"][0]["priority"], 0);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn node_and_am_get_the_same_token_per_container_and_a_new_one_for_each() {
    let rm = Rm::new();
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    let app = rm.submit("alice", "a").await;
    let hb = rm.heartbeat("h1:8041", 0, json!([])).await.json();
    let am = tokens(&hb["allocatedContainers"]);
    assert_eq!(am.len(), 1);
    let reg = rm.am(&app, "register", json!({})).await;
    assert_eq!(reg.status, StatusCode::OK, "{}", reg.body);
    let ask = json!({"responseId": 0, "asks": [{"priority": 1, "resourceName": "*", "capability": {"memory": 1024, "vCores": 1}, "numContainers": 4}]});
    assert_eq!(rm.allocate(&app, ask).await.status, StatusCode::OK);
    // Two heartbeats from each node: one container each time.
    let mut to_nodes = Vec::new();
    for (node, id) in [
        ("h1:8041", 1),
        ("h2:8041", 0),
        ("h1:8041", 2),
        ("h2:8041", 1),
    ] {
        let hb = rm.heartbeat(node, id, json!([])).await;
        assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
        let hb = hb.json();
        to_nodes.extend(tokens(&hb["allocatedContainers"]));
    }
    let answer = rm.allocate(&app, json!({"responseId": 1})).await;
    let mut to_am = tokens(&answer.json()["allocated"]);
    to_nodes.sort();
    to_am.sort();
    assert_eq!(to_am.len(), 4);
    assert_eq!(to_nodes, to_am);
    // Five containers (the AM's included), five tokens.
    let distinct: std::collections::BTreeSet<&String> =
        to_am.iter().chain(&am).map(|(_, t)| t).collect();
    assert_eq!(distinct.len(), 5);
    // A repeated allocate call replays the same tokens.
    let again = rm.allocate(&app, json!({"responseId": 1})).await;
    assert_eq!(again.body, answer.body);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn application_master_protocol() {
    let rm = Rm::new();
    let r = &rm.router;
    let unknown = "application_1700000000000_0050";
    let made_up = "00112233445566778899aabbccddeeff";
    assert_eq!(
        rm.am_with(unknown, "register", json!({}), Some(made_up))
            .await
            .error(),
        "404 NotFoundException: application application_1700000000000_0050 is not known"
    );
    rm.register("h1:8041", 8192, 8).await;
    let app = rm.submit("alice", "a").await;
    // Before its container exists the attempt has no token, so no AM can
    // speak for it.
    assert_eq!(
        rm.am_with(&app, "register", json!({}), Some(made_up))
            .await
            .error(),
        "403 ForbiddenException: the AM token presented is not that of a running attempt of application application_1700000000000_0001; an AM container has its attempt's token in WEFT_AM_TOKEN, an unmanaged AM's owner finds it in the application's report (amRMToken), and a new attempt's token replaces the last"
    );
    rm.heartbeat("h1:8041", 0, json!([])).await;
    // Before registering it cannot allocate.
    assert_eq!(
        rm.allocate(&app, json!({"responseId": 0})).await.error(),
        "409 YarnException: application application_1700000000000_0001 must register its application master before asking for containers"
    );
    let token = format!("Bearer {}", rm.am_token(&app));
    let reg = call(
        r,
        Method::POST,
        &format!("/ws/v1/am/{app}/register"),
        None,
        "",
        &[("authorization", &token)],
    )
    .await;
    expect![[r#"{"maximumResourceCapability":{"memory":8192,"vCores":8},"queue":"root.a","responseId":0}"#]]
        .assert_eq(&reg.body);
    // Asks; the next heartbeat allocates; the next allocate delivers.
    let ask = json!({"responseId": 0, "asks": [{"priority": 1, "resourceName": "*", "capability": {"memory": 1024, "vCores": 1}, "numContainers": 2, "relaxLocality": true}], "progress": 0.1});
    let first = rm.allocate(&app, ask.clone()).await;
    assert_eq!(first.json()["allocated"], json!([]));
    assert_eq!(first.json()["numClusterNodes"], 1);
    // One container per heartbeat (yarn.scheduler.fair.assignmultiple is off).
    rm.heartbeat("h1:8041", 1, json!([])).await;
    rm.heartbeat("h1:8041", 2, json!([])).await;
    let second = rm.allocate(&app, json!({"responseId": 1})).await;
    let v = second.json();
    assert_eq!(v["responseId"], 2);
    let allocated: Vec<&str> = v["allocated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["containerId"].as_str().unwrap())
        .collect();
    assert_eq!(
        allocated,
        [
            "container_1700000000000_0001_01_000002",
            "container_1700000000000_0001_01_000003"
        ]
    );
    // A repeat gets the same answer; out of sequence is refused.
    assert_eq!(
        rm.allocate(&app, json!({"responseId": 1})).await.body,
        second.body
    );
    assert_eq!(
        rm.allocate(&app, json!({"responseId": 7})).await.error(),
        "409 YarnException: application application_1700000000000_0001 sent responseId 7, but the last answer it was sent has responseId 2; send the responseId of the last answer received"
    );
    // Bad asks and releases.
    let mut rendered = String::new();
    for body in [
        json!({"responseId": 2, "asks": [{"priority": 1, "capability": {"memory": 99999, "vCores": 1}, "numContainers": 1}]}),
        json!({"responseId": 2, "asks": [{"priority": 1, "resourceName": " ", "capability": {"memory": 1024, "vCores": 1}, "numContainers": 1}]}),
        json!({"responseId": 2, "releases": ["container-2"]}),
        json!({"responseId": 2, "asks": [{"priority": 1}]}),
    ] {
        rendered.push_str(&rm.allocate(&app, body).await.error());
        rendered.push('\n');
    }
    expect![[r#"
        400 BadRequestException: invalid ask: an ask for <memory:99999, vCores:1> is larger than the maximum allocation <memory:8192, vCores:8>
        400 BadRequestException: invalid ask: an ask at priority 1 has an empty resource name (use a host, a rack such as /rack1, or *)
        400 BadRequestException: releases[0]: invalid container id "container-2": expected container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<sequence>
        400 BadRequestException: the JSON body does not match the expected fields: missing field `capability` at line 1 column 23
    "#]]
    .assert_eq(&rendered);
    // Releasing a container: it completes, its node is told to stop it.
    let rel = rm
        .allocate(
            &app,
            json!({"responseId": 2, "releases": ["container_1700000000000_0001_01_000002"]}),
        )
        .await;
    assert_eq!(rel.json()["completed"][0]["exitStatus"], -100);
    let hb = rm.heartbeat("h1:8041", 3, json!([])).await.json();
    assert_eq!(
        hb["containersToStop"],
        json!([{"containerId": "container_1700000000000_0001_01_000002", "reason": "RELEASED"}])
    );
    // Finishing.
    assert_eq!(
        rm.am(&app, "finish", json!({"finalStatus": "DONE"}))
            .await
            .error(),
        "400 BadRequestException: finalStatus: \"DONE\" is not a final status; expected SUCCEEDED, FAILED or KILLED"
    );
    let fin = rm
        .am(
            &app,
            "finish",
            json!({"finalStatus": "SUCCEEDED", "diagnostics": "all done"}),
        )
        .await;
    assert_eq!(fin.body, r#"{"isUnregistered":true}"#);
    let v = get(r, &format!("/ws/v1/cluster/apps/{app}")).await.json();
    assert_eq!(
        (v["app"]["state"].as_str(), v["app"]["finalStatus"].as_str()),
        (Some("FINISHED"), Some("SUCCEEDED"))
    );
    assert_eq!(
        rm.allocate(&app, json!({"responseId": 3})).await.error(),
        "409 YarnException: application application_1700000000000_0001 has already ended (finished)"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn nodes() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 4096, 4).await;
    rm.running("alice", "a", "h1:8041", 0).await;
    let v = get(r, "/ws/v1/cluster/nodes").await.json();
    let n = &v["nodes"]["node"];
    assert_eq!(n.as_array().unwrap().len(), 2);
    expect![[r#"{"availMemoryMB":7168,"availableResource":{"memory":7168,"vCores":7},"availableVirtualCores":7,"healthReport":"","id":"h1:8041","lastHealthUpdate":1700000000000,"nodeHTTPAddress":"h1:8042","nodeHostName":"h1","numContainers":1,"rack":"/r1","reservedResource":{"memory":0,"vCores":0},"resourceUtilization":{"aggregatedContainersPhysicalMemoryMB":0,"aggregatedContainersVirtualMemoryMB":0,"containersCPUUsage":0.0,"nodeCPUUsage":0.0,"nodePhysicalMemoryMB":0,"nodeVirtualMemoryMB":0},"state":"RUNNING","totalResource":{"memory":8192,"vCores":8},"usedMemoryMB":1024,"usedResource":{"memory":1024,"vCores":1},"usedVirtualCores":1,"version":""}"#]]
        .assert_eq(&n[0].to_string());
    assert_eq!(
        get(r, "/ws/v1/cluster/nodes/h2:8041").await.json()["node"]["totalResource"]["memory"],
        4096
    );
    assert_eq!(
        get(r, "/ws/v1/cluster/nodes?states=LOST").await.body,
        r#"{"nodes":{}}"#
    );
    // XML has an empty element, as Hadoop's.
    assert!(
        call(
            r,
            Method::GET,
            "/ws/v1/cluster/nodes?states=LOST",
            None,
            "",
            &[("accept", "application/xml")]
        )
        .await
        .body
        .ends_with("<nodes/>")
    );
    assert_eq!(
        get(r, "/ws/v1/cluster/nodes?states=LOST&states=RUNNING")
            .await
            .body,
        r#"{"nodes":{}}"#
    );
    assert_eq!(
        get(r, "/ws/v1/cluster/nodes?states=GONE").await.error(),
        "400 BadRequestException: states: invalid node state \"GONE\"; expected one of NEW, RUNNING, UNHEALTHY, DECOMMISSIONING, DECOMMISSIONED, LOST, REBOOTED, SHUTDOWN"
    );
    assert_eq!(
        get(r, "/ws/v1/cluster/nodes/h9:1").await.error(),
        "404 NotFoundException: node h9:1 is not known"
    );
    assert_eq!(
        get(r, "/ws/v1/cluster/nodes/h9").await.error(),
        "400 BadRequestException: invalid node id \"h9\": expected host:port"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn cluster_metrics_and_scheduler_tree() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    let a = rm.running("alice", "a", "h1:8041", 0).await;
    let b = rm.running("bob", "b", "h2:8041", 0).await;
    // Both apps ask for more than the cluster has.
    let ask = |n| json!({"responseId": 0, "asks": [{"priority": 1, "capability": {"memory": 1024, "vCores": 1}, "numContainers": n}]});
    rm.allocate(&a, ask(20)).await;
    rm.allocate(&b, ask(20)).await;
    // Let the update pass compute fair shares.
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let m = get(r, "/ws/v1/cluster/metrics").await.json();
    expect![[r#"{"clusterMetrics":{"activeNodes":2,"allocatedMB":2048,"allocatedVirtualCores":2,"appsCompleted":0,"appsFailed":0,"appsKilled":0,"appsPending":0,"appsRunning":2,"appsSubmitted":2,"availableMB":14336,"availableVirtualCores":14,"containersAllocated":2,"containersPending":40,"containersReserved":0,"decommissionedNodes":0,"decommissioningNodes":0,"lostNodes":0,"pendingMB":40960,"pendingVirtualCores":40,"rebootedNodes":0,"reservedMB":0,"reservedVirtualCores":0,"shutdownNodes":0,"totalMB":16384,"totalNodes":2,"totalVirtualCores":16,"unhealthyNodes":0,"utilizedMBPercent":0,"utilizedVirtualCoresPercent":0}}"#]]
        .assert_eq(&m.to_string());
    let s = get(r, "/ws/v1/cluster/scheduler").await.json();
    assert_eq!(
        render_tree(&s["scheduler"]["schedulerInfo"]["rootQueue"], 0),
        expect_tree()
    );
    let info = &s["scheduler"]["schedulerInfo"];
    // A parent with no children has no childQueues at all, as in Hadoop
    // (FairSchedulerQueueInfo omits the field rather than write it empty).
    let p = &info["rootQueue"]["childQueues"]["queue"][3];
    assert_eq!(p["queueName"], "root.p");
    assert_eq!(p.get("childQueues"), None, "{p}");
    assert_eq!(p.get("type"), None, "{p}");
    assert_eq!(info["type"], "fairScheduler");
    assert_eq!(info["allocationFile"]["reloadsSucceeded"], 1);
    assert_eq!(info["allocationFile"]["lastError"], Value::Null);
    rm.stop().await;
}

fn expect_tree() -> String {
    // root.a (weight 3) and root.b (weight 1) share 16 GB 3:1; the others are
    // idle. Steady shares split by weight 3:1:1:1 over every configured queue
    // (Hadoop's search rounds up, so they sum to a little over 16384).
    "root fair=16384 steady=16384 used=2048 demand=43008 containers=2 pending=40\n\
     \x20 root.a fair=12288 steady=8193 used=1024 demand=21504 containers=1 pending=20 active=1 pending_apps=0\n\
     \x20 root.b fair=4096 steady=2731 used=1024 demand=21504 containers=1 pending=20 active=1 pending_apps=0\n\
     \x20 root.default fair=0 steady=2731 used=0 demand=0 containers=0 pending=0 active=0 pending_apps=0\n\
     \x20 root.p fair=0 steady=2731 used=0 demand=0 containers=0 pending=0\n"
        .to_owned()
}

fn render_tree(q: &Value, depth: usize) -> String {
    let mut out = format!(
        "{}{} fair={} steady={} used={} demand={} containers={} pending={}",
        "  ".repeat(depth),
        q["queueName"].as_str().unwrap(),
        q["fairResources"]["memory"],
        q["steadyFairResources"]["memory"],
        q["usedResources"]["memory"],
        q["demandResources"]["memory"],
        q["allocatedContainers"],
        q["pendingContainers"],
    );
    if q["type"] == "fairSchedulerLeafQueueInfo" {
        out.push_str(&format!(
            " active={} pending_apps={}",
            q["numActiveApps"], q["numPendingApps"]
        ));
    }
    out.push('\n');
    if let Some(children) = q["childQueues"]["queue"].as_array() {
        for c in children {
            out.push_str(&render_tree(c, depth + 1));
        }
    }
    out
}

/// An admin call (`refresh-queues`, `refresh-nodes`) needs a user, and one
/// who is a cluster administrator.
async fn refresh_is_for_admins(r: &Router, uri: &str, what: &str) {
    assert_eq!(
        call(r, Method::POST, uri, None, "", &[]).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        call(
            r,
            Method::POST,
            &format!("{uri}?user.name=alice"),
            None,
            "",
            &[]
        )
        .await
        .error(),
        format!(
            "403 ForbiddenException: user alice is not a cluster administrator (yarn.admin.acl) and may not refresh {what}"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn refresh_queues_needs_an_admin_and_a_file() {
    let rm = Rm::new();
    let r = &rm.router;
    let uri = "/ws/v1/cluster/refresh-queues";
    refresh_is_for_admins(r, uri, "the queues").await;
    assert_eq!(
        call(
            r,
            Method::POST,
            &format!("{uri}?user.name=yarn"),
            None,
            "",
            &[]
        )
        .await
        .error(),
        "400 BadRequestException: the resource manager runs on its built-in configuration and has no allocation file to reload; start it with --conf DIR"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn unknown_paths_methods_and_xml_errors() {
    let rm = Rm::new();
    let r = &rm.router;
    assert_eq!(
        get(r, "/ws/v1/cluster/nothing").await.error(),
        "404 NotFoundException: no such resource: GET /ws/v1/cluster/nothing (see docs/api.md for the endpoints)"
    );
    assert_eq!(
        call(r, Method::DELETE, "/ws/v1/cluster/apps", None, "", &[])
            .await
            .error(),
        "405 NotAllowedException: DELETE is not allowed on /ws/v1/cluster/apps"
    );
    let xml = call(
        r,
        Method::GET,
        "/ws/v1/cluster/apps/application_1_0001",
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert_eq!(xml.status, StatusCode::NOT_FOUND);
    assert_eq!(xml.headers["content-type"], "application/xml");
    expect![[r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><RemoteException><exception>NotFoundException</exception><message>application application_1_0001 is not known</message><javaClassName>org.apache.hadoop.yarn.webapp.NotFoundException</javaClassName></RemoteException>"#]]
        .assert_eq(&xml.body);
    // A repeated single-valued parameter counts by its first value, as
    // Hadoop's JAX-RS reads it, not refused.
    assert_eq!(
        get(r, "/ws/v1/cluster/apps?limit=1&limit=x").await.status,
        StatusCode::OK
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn xml_answers_use_hadoops_element_names() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    let xml = call(
        r,
        Method::GET,
        "/ws/v1/cluster/nodes",
        None,
        "",
        &[("accept", "text/xml")],
    )
    .await;
    assert!(
        xml.body
            .contains("<nodes><node><rack>/r1</rack><state>RUNNING</state><id>h1:8041</id>"),
        "{}",
        xml.body
    );
    let app = rm.submit("alice", "a").await;
    let xml = call(
        r,
        Method::GET,
        "/ws/v1/cluster/apps",
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert!(
        xml.body
            .contains(&format!("<apps><app><id>{app}</id><user>alice</user>")),
        "{}",
        xml.body
    );
    let xml = call(
        r,
        Method::GET,
        "/ws/v1/cluster/scheduler",
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert!(xml.body.contains("<scheduler><schedulerInfo><type>fairScheduler</type><rootQueue><queueName>root</queueName>"), "{}", xml.body);
    assert!(xml.body.contains("<childQueues><queue><type>fairSchedulerLeafQueueInfo</type><queueName>root.a</queueName>"), "{}", xml.body);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn prometheus_text() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    rm.running("alice", "a", "h1:8041", 0).await;
    let a = get(r, "/metrics").await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(
        a.headers["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    for line in [
        "weft_queue_apps_submitted_total{queue=\"root.a\"} 1",
        "weft_queue_apps_submitted_total{queue=\"root\"} 1",
        "weft_queue_apps_running{queue=\"root.a\"} 1",
        "weft_queue_allocated_memory_bytes{queue=\"root.a\"} 1073741824",
        "weft_queue_am_used_memory_bytes{queue=\"root.a\"} 1073741824",
        "weft_cluster_nodes{state=\"running\"} 1",
        "weft_cluster_capacity_memory_bytes 8589934592",
        "weft_scheduler_allocations_total{locality=\"off_switch\"} 1",
        "weft_alloc_file_reloads_total{outcome=\"success\"} 1",
        "# TYPE weft_scheduler_node_heartbeat_duration_seconds histogram",
    ] {
        assert!(
            a.body.lines().any(|l| l == line),
            "missing {line:?} in\n{}",
            a.body
        );
    }
    rm.stop().await;
}

mod fuzz {
    //! Whatever a client sends, the answer is never a 5xx and the scheduler
    //! keeps serving.

    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::*;

    const KEYS: &[&str] = &[
        "nodeId",
        "responseId",
        "capability",
        "memory",
        "vCores",
        "containers",
        "containerId",
        "state",
        "exitStatus",
        "resource",
        "priority",
        "asks",
        "resourceName",
        "numContainers",
        "relaxLocality",
        "releases",
        "progress",
        "finalStatus",
        "application-id",
        "queue",
        "unmanaged-AM",
        "am-container-spec",
        "application-tags",
        "tag",
        "rack",
        "application-timeouts",
        "LIFETIME",
        "timeout",
        "type",
        "expiryTime",
        "graceful",
        "timeoutSecs",
        "resourceOption",
        "overCommitTimeout",
    ];

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (0u64..5).prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("JSON has no NaN", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            prop_oneof![
                Just("h1:8041".to_owned()),
                Just("application_1700000000000_0001".to_owned()),
                Just("container_1700000000000_0001_01_000001".to_owned()),
                Just("KILLED".to_owned()),
                Just("COMPLETE".to_owned()),
                Just("*".to_owned()),
                Just("root.a".to_owned()),
                Just("LIFETIME".to_owned()),
                Just("2030-01-31T18:30:00.000+0000".to_owned()),
                Just("9999-12-31T23:59:59.999-2359".to_owned()),
                "\\PC{0,12}",
            ]
            .prop_map(Value::String),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|kvs| {
                    Value::Object(
                        kvs.into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect::<Map<_, _>>(),
                    )
                }),
            ]
        })
    }

    const TARGETS: &[(&str, &str)] = &[
        ("POST", "/ws/v1/nm/register"),
        ("POST", "/ws/v1/nm/heartbeat"),
        ("POST", "/ws/v1/nm/unregister"),
        ("POST", "/ws/v1/am/application_1700000000000_0001/register"),
        ("POST", "/ws/v1/am/application_1700000000000_0001/allocate"),
        ("POST", "/ws/v1/am/application_1700000000000_0001/finish"),
        ("POST", "/ws/v1/cluster/apps?user.name=alice"),
        (
            "PUT",
            "/ws/v1/cluster/apps/application_1700000000000_0001/state?user.name=alice",
        ),
        (
            "PUT",
            "/ws/v1/cluster/apps/application_1700000000000_0001/queue?user.name=alice",
        ),
        (
            "PUT",
            "/ws/v1/cluster/apps/application_1700000000000_0001/priority?user.name=alice",
        ),
        ("POST", "/ws/v1/cluster/refresh-queues?user.name=yarn"),
        (
            "PUT",
            "/ws/v1/cluster/apps/application_1700000000000_0001/timeout?user.name=alice",
        ),
        ("POST", "/ws/v1/cluster/refresh-nodes?user.name=yarn"),
        (
            "POST",
            "/ws/v1/cluster/refresh-nodes-resources?user.name=yarn",
        ),
        (
            "POST",
            "/ws/v1/cluster/nodes/h1:8041/resource?user.name=yarn",
        ),
        ("POST", "/ws/v1/cluster/refresh-admin-acls?user.name=yarn"),
        ("POST", "/ws/v1/cluster/refresh-user-groups?user.name=yarn"),
    ];

    /// Every read a client can make, with `{seg}` for a path segment and
    /// `{q}` for a query string drawn at random.
    const READS: &[&str] = &[
        "/ws/v1/cluster?{q}",
        "/ws/v1/cluster/info?{q}",
        "/ws/v1/cluster/metrics?{q}",
        "/ws/v1/cluster/scheduler?{q}",
        "/ws/v1/cluster/apps?{q}",
        "/ws/v1/cluster/appstatistics?{q}",
        "/ws/v1/cluster/apps/{seg}?{q}",
        "/ws/v1/cluster/apps/{seg}/state",
        "/ws/v1/cluster/apps/{seg}/queue",
        "/ws/v1/cluster/apps/{seg}/priority",
        "/ws/v1/cluster/apps/{app}/timeouts/{seg}",
        "/ws/v1/cluster/apps/{seg}/appattempts?{q}",
        "/ws/v1/cluster/apps/{app}/appattempts/{seg}?{q}",
        "/ws/v1/cluster/apps/{seg}/appattempts/{attempt}/containers",
        "/ws/v1/cluster/apps/{app}/appattempts/{seg}/containers?{q}",
        "/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers/{seg}",
        "/ws/v1/cluster/apps/{seg}/explain?{q}",
        "/ws/v1/cluster/nodes?{q}",
        "/ws/v1/cluster/nodes/{seg}",
        "/ws/v1/cluster/users/{seg}/groups?{q}",
        "/jmx?{q}",
        "/conf?{q}",
        "/isActive?{q}",
        "/logLevel?{q}",
        "/metrics?{q}",
        "/cluster?{q}",
        "/cluster/apps/{seg}?{q}",
        "/cluster/app/{seg}?{q}",
        "/cluster/nodes?{q}",
        "/cluster/scheduler?{q}",
        "/{seg}",
    ];

    /// Text as a URI carries it: every byte but ASCII letters and digits
    /// percent-encoded, so anything at all reaches the handlers.
    fn encoded(text: &str) -> String {
        text.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b == b'_' {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    /// Ids that are right, nearly right, or nothing like one.
    fn segment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("application_1700000000000_0001".to_owned()),
            Just("application_1700000000000_0002".to_owned()),
            Just("application_1700000000000_99999999999999999999".to_owned()),
            Just("appattempt_1700000000000_0001_000001".to_owned()),
            Just("appattempt_1700000000000_0001_000002".to_owned()),
            Just("appattempt_1700000000000_0002_000001".to_owned()),
            Just("appattempt_1700000000000_0001_-00001".to_owned()),
            Just("container_1700000000000_0001_01_000001".to_owned()),
            Just("container_e7_1700000000000_0001_01_000001".to_owned()),
            Just("container_1700000000000_0002_01_000001".to_owned()),
            Just("h1:8041".to_owned()),
            Just("LIFETIME".to_owned()),
            Just("alice".to_owned()),
            "\\PC{0,16}".prop_map(|t| encoded(&t)),
            "[a-z_0-9]{0,40}",
        ]
    }

    /// Query strings with the parameters the reads take, and others.
    fn query() -> impl Strategy<Value = String> {
        let key = prop::sample::select(
            &[
                "states",
                "state",
                "user",
                "user.name",
                "queue",
                "limit",
                "applicationTypes",
                "applicationTags",
                "finalStatus",
                "startedTimeBegin",
                "startedTimeEnd",
                "finishedTimeBegin",
                "finishedTimeEnd",
                "deSelects",
                "qry",
                "get",
                "callback",
                "name",
                "groupBy",
                "format",
                "log",
                "level",
            ][..],
        );
        let value = prop_oneof![
            Just("RUNNING,ACCEPTED".to_owned()),
            Just("running".to_owned()),
            Just("-1".to_owned()),
            Just("18446744073709551616".to_owned()),
            Just("Hadoop:service=ResourceManager,name=QueueMetrics,*".to_owned()),
            Just("Hadoop:*::AppsRunning".to_owned()),
            Just("*:*".to_owned()),
            Just("MAPREDUCE,SPARK".to_owned()),
            Just("json".to_owned()),
            Just("yarn.admin.acl".to_owned()),
            Just("weft_rm::actor".to_owned()),
            Just("DEBUG".to_owned()),
            "\\PC{0,12}".prop_map(|t| encoded(&t)),
        ];
        prop::collection::vec((key, value), 0..4).prop_map(|kvs| {
            kvs.into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("&")
        })
    }

    fn big() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..10_000,
            Just(u64::MAX),
            Just(i64::MAX as u64),
            any::<u64>()
        ]
    }

    /// What a request shows in `Authorization`: mostly what its target asks
    /// for (the node secret, app 1's AM token), so that it reaches past the
    /// check, else nothing, a well-formed wrong token or anything at all.
    #[derive(Clone, Debug)]
    enum Auth {
        Right,
        Missing,
        Other(String),
    }

    fn auth() -> impl Strategy<Value = Auth> {
        prop_oneof![
            6 => Just(Auth::Right),
            1 => Just(Auth::Missing),
            1 => "[0-9a-f]{32}".prop_map(|t| Auth::Other(format!("Bearer {t}"))),
            1 => "[ -~]{0,40}".prop_map(Auth::Other),
        ]
    }

    /// The `Authorization` value `auth` means for `TARGETS[target]` on `rm`,
    /// whose app 1 runs with its AM registered.
    fn authorization(rm: &Rm, target: usize, auth: &Auth) -> Option<String> {
        match auth {
            Auth::Missing => None,
            Auth::Other(v) => Some(v.clone()),
            Auth::Right => match TARGETS[target].1 {
                uri if uri.starts_with("/ws/v1/nm/") => rm.node_auth.clone(),
                uri if uri.starts_with("/ws/v1/am/") => Some(format!(
                    "Bearer {}",
                    rm.am_token("application_1700000000000_0001")
                )),
                _ => None,
            },
        }
    }

    /// Sends `body` to `TARGETS[target]` showing what `auth` means there.
    async fn send(rm: &Rm, target: usize, body: &Value, auth: &Auth) -> Answer {
        let (method, uri) = TARGETS[target];
        let method: Method = method.parse().unwrap();
        let value = authorization(rm, target, auth);
        let headers: Vec<(&str, &str)> = value
            .as_deref()
            .map(|v| ("authorization", v))
            .into_iter()
            .collect();
        call(
            &rm.router,
            method,
            uri,
            Some("application/json"),
            &body.to_string(),
            &headers,
        )
        .await
    }

    /// Well-formed protocol calls with extreme values, to reach past parsing.
    fn protocol_call() -> impl Strategy<Value = (usize, Value)> {
        prop_oneof![
            (big(), big()).prop_map(|(m, v)| (0, json!({"nodeId": "h2:8041", "capability": {"memory": m, "vCores": v}}))),
            (0u64..4, prop::collection::vec((1u64..4, any::<bool>(), any::<i32>()), 0..3)).prop_map(|(id, cs)| {
                let containers: Vec<Value> = cs
                    .into_iter()
                    .map(|(seq, done, status)| json!({
                        "containerId": format!("container_1700000000000_0001_01_{seq:06}"),
                        "state": if done { "COMPLETE" } else { "RUNNING" },
                        "exitStatus": status}))
                    .collect();
                (1, json!({"nodeId": "h1:8041", "responseId": id, "containers": containers}))
            }),
            Just((3, json!({}))),
            (0u64..4, any::<i32>(), big(), big(), any::<u32>(), "\\PC{0,6}", any::<f32>().prop_filter("finite", |f| f.is_finite()))
                .prop_map(|(id, p, m, v, n, name, progress)| {
                    (4, json!({"responseId": id, "progress": progress, "asks": [{"priority": p, "resourceName": name, "capability": {"memory": m, "vCores": v}, "numContainers": n}],
                               "releases": ["container_1700000000000_0001_01_000002"]}))
                }),
            (big(), big(), any::<i32>()).prop_map(|(m, v, p)| {
                (6, json!({"application-id": "application_1700000000000_0009", "queue": "b", "priority": p, "resource": {"memory": m, "vCores": v}}))
            }),
            "\\PC{0,10}".prop_map(|q| (8, json!({"queue": q}))),
            any::<i32>().prop_map(|p| (9, json!({"priority": p}))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn no_protocol_call_causes_a_server_error(
            requests in prop::collection::vec((protocol_call(), auth()), 1..24),
            node_secret in any::<bool>(),
        ) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
            rt.block_on(async {
                let rm = if node_secret { Rm::with_node_secret() } else { Rm::new() };
                rm.register("h1:8041", 8192, 8).await;
                rm.running("alice", "a", "h1:8041", 0).await;
                // Up to the id the submissions use.
                for _ in 2..=9 {
                    rm.new_app("bob").await;
                }
                for ((target, body), auth) in requests {
                    let a = send(&rm, target, &body, &auth).await;
                    let uri = TARGETS[target].1;
                    assert!(!a.status.is_server_error(), "{uri} {body} {auth:?}: {} {}", a.status, a.body);
                    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                }
                assert_eq!(get(&rm.router, "/ws/v1/cluster/scheduler").await.status, StatusCode::OK);
                assert_eq!(get(&rm.router, "/ws/v1/cluster/nodes").await.status, StatusCode::OK);
                rm.stop().await;
            });
        }

        #[test]
        fn no_read_causes_a_server_error(
            reads in prop::collection::vec((0..READS.len(), segment(), query(), any::<bool>()), 1..24)
        ) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
            rt.block_on(async {
                let rm = Rm::new();
                // A running app with an AM container, and a pending one, to aim at.
                rm.register("h1:8041", 8192, 8).await;
                let running = rm.running("alice", "a", "h1:8041", 0).await;
                rm.submit("bob", "b").await;
                let attempt = running.replacen("application_", "appattempt_", 1) + "_000001";
                for (read, seg, query, xml) in reads {
                    let uri = READS[read]
                        .replace("{app}", &running)
                        .replace("{attempt}", &attempt)
                        .replace("{seg}", &seg)
                        .replace("{q}", &query);
                    let accept = if xml { "application/xml" } else { "application/json" };
                    let a = call(&rm.router, Method::GET, &uri, None, "", &[("accept", accept)]).await;
                    assert!(!a.status.is_server_error(), "GET {uri}: {} {}", a.status, a.body);
                }
                assert_eq!(get(&rm.router, "/ws/v1/cluster/apps").await.status, StatusCode::OK);
                rm.stop().await;
            });
        }

        #[test]
        fn no_body_causes_a_server_error(
            requests in prop::collection::vec((0..TARGETS.len(), value(), auth()), 1..16),
            node_secret in any::<bool>(),
        ) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
            rt.block_on(async {
                let rm = if node_secret { Rm::with_node_secret() } else { Rm::new() };
                // A node and an app (its AM container placed, so it has a
                // token) to aim at.
                rm.register("h1:8041", 8192, 8).await;
                rm.submit("alice", "a").await;
                rm.heartbeat("h1:8041", 0, json!([])).await;
                for (target, body, auth) in requests {
                    let a = send(&rm, target, &body, &auth).await;
                    let uri = TARGETS[target].1;
                    assert!(!a.status.is_server_error(), "{uri} {body} {auth:?}: {} {}", a.status, a.body);
                }
                assert_eq!(get(&rm.router, "/ws/v1/cluster/metrics").await.status, StatusCode::OK);
                rm.stop().await;
            });
        }
    }
}

#[tokio::test(start_paused = true)]
async fn xml_submission() {
    let rm = Rm::with(&[("yarn.cluster.max-application-priority", "5")]);
    let app = rm.new_app("bob").await;
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<application-submission-context>
  <application-id>{app}</application-id>
  <application-name>xml job</application-name>
  <queue>b</queue>
  <priority>3</priority>
  <am-container-spec><commands><command>sleep 5</command></commands></am-container-spec>
  <unmanaged-AM>false</unmanaged-AM>
  <resource><memory>2048</memory><vCores>2</vCores></resource>
  <application-type>MAPREDUCE</application-type>
  <application-tags><tag>a</tag><tag>b</tag></application-tags>
</application-submission-context>"
    );
    let a = call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/apps?user.name=bob",
        Some("application/xml"),
        &body,
        &[],
    )
    .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    let v = get(&rm.router, &format!("/ws/v1/cluster/apps/{app}"))
        .await
        .json();
    let app_json = &v["app"];
    assert_eq!(
        (
            app_json["name"].as_str(),
            app_json["queue"].as_str(),
            app_json["priority"].as_i64(),
            app_json["applicationType"].as_str(),
            app_json["applicationTags"].as_str()
        ),
        (
            Some("xml job"),
            Some("root.b"),
            Some(3),
            Some("MAPREDUCE"),
            Some("a,b")
        )
    );
    // The launch context reaches the node as given.
    rm.register("h1:8041", 8192, 8).await;
    let hb = rm.heartbeat("h1:8041", 0, json!([])).await.json();
    assert_eq!(
        hb["allocatedContainers"][0]["launchContext"],
        json!({"commands": {"command": "sleep 5"}})
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn deeply_nested_xml_is_refused_without_exhausting_the_stack() {
    // The default body limit: a body this size must not take the RM down.
    let rm = Rm::with(&[("weft.rm.max-request-bytes", "1048576")]);
    let r = &rm.router;
    let app = rm.new_app("bob").await;
    // The launch context is free-form, decoded one stack frame per level.
    let levels = 100_000;
    let body = format!(
        "<application-submission-context><application-id>{app}</application-id><queue>b</queue>\n<am-container-spec>{}x{}</am-container-spec></application-submission-context>",
        "<a>".repeat(levels),
        "</a>".repeat(levels)
    );
    assert!(body.len() < 1 << 20);
    let a = call(
        r,
        Method::POST,
        "/ws/v1/cluster/apps?user.name=bob",
        Some("application/xml"),
        &body,
        &[],
    )
    .await;
    assert_eq!(
        a.error(),
        "400 BadRequestException: the XML body nests elements more than 128 deep (the element at line 2, column 398)"
    );
    // The same on the protocols, which read XML bodies too.
    let body = format!(
        "<r><nodeId>h1:8041</nodeId>{}{}</r>",
        "<x>".repeat(levels),
        "</x>".repeat(levels)
    );
    let a = call(
        r,
        Method::POST,
        "/ws/v1/nm/register",
        Some("text/xml"),
        &body,
        &[],
    )
    .await;
    assert_eq!(
        a.error(),
        "400 BadRequestException: the XML body nests elements more than 128 deep (the element at line 1, column 409)"
    );
    // Nesting a launch context can use is still read.
    let nested = "<commands><command>sleep 1</command></commands><environment><entry><key>A</key><value>1</value></entry></environment>";
    let body = format!(
        "<application-submission-context><application-id>{app}</application-id><queue>b</queue><am-container-spec>{nested}</am-container-spec></application-submission-context>"
    );
    let a = call(
        r,
        Method::POST,
        "/ws/v1/cluster/apps?user.name=bob",
        Some("application/xml"),
        &body,
        &[],
    )
    .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    assert_eq!(
        get(r, "/ws/v1/cluster/metrics").await.status,
        StatusCode::OK
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn only_issued_application_ids_are_submitted() {
    let rm = Rm::new();
    let r = &rm.router;
    let issued = rm.new_app("bob").await;
    // Ids new-application never gave out: a later one of this RM's, the
    // last sequence number (which once left new-application nothing to
    // count to and stopped the scheduler), another cluster's, and 0.
    let mut rendered = String::new();
    for app in [
        "application_1700000000000_0002",
        "application_1700000000000_4294967295",
        "application_1_4294967294",
        "application_1700000000000_0000",
    ] {
        let a = post(
            r,
            "/ws/v1/cluster/apps?user.name=bob",
            json!({"application-id": app, "queue": "b"}),
        )
        .await;
        rendered.push_str(&a.error());
        rendered.push('\n');
    }
    expect![[r#"
        400 BadRequestException: application-id application_1700000000000_0002 was not issued by this resource manager; ask POST /ws/v1/cluster/apps/new-application for one
        400 BadRequestException: application-id application_1700000000000_4294967295 was not issued by this resource manager; ask POST /ws/v1/cluster/apps/new-application for one
        400 BadRequestException: application-id application_1_4294967294 was not issued by this resource manager; ask POST /ws/v1/cluster/apps/new-application for one
        400 BadRequestException: application-id application_1700000000000_0000 was not issued by this resource manager; ask POST /ws/v1/cluster/apps/new-application for one
    "#]]
    .assert_eq(&rendered);
    // Nothing was recorded, and ids keep coming in order.
    assert_eq!(get(r, "/ws/v1/cluster/apps").await.body, r#"{"apps":{}}"#);
    assert_eq!(rm.new_app("bob").await, "application_1700000000000_0002");
    assert_eq!(
        rm.submit_to("bob", &issued, "b").await.status,
        StatusCode::ACCEPTED
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_missing_body_is_called_missing_whatever_the_content_type() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = rm.submit("alice", "a").await;
    let uri = format!("/ws/v1/cluster/apps/{app}/state?user.name=alice");
    let mut rendered = String::new();
    for ct in [None, Some("text/plain"), Some("application/json")] {
        let a = call(r, Method::PUT, &uri, ct, "", &[]).await;
        rendered.push_str(&a.error());
        rendered.push('\n');
    }
    expect![[r#"
        400 BadRequestException: the request body is empty
        400 BadRequestException: the request body is empty
        400 BadRequestException: the request body is empty
    "#]]
    .assert_eq(&rendered);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn paths_answer_with_a_trailing_slash_too() {
    // As Hadoop's do: scripts write `/ws/v1/cluster/apps/?states=RUNNING`.
    let rm = Rm::new();
    let r = &rm.router;
    let app = rm.submit("alice", "a").await;
    let list = get(r, "/ws/v1/cluster/apps/?states=ACCEPTED").await;
    assert_eq!(
        list.json()["apps"]["app"][0]["id"],
        app.as_str(),
        "{}",
        list.body
    );
    for uri in [
        "/ws/v1/cluster/".to_owned(),
        "/ws/v1/cluster/info/".to_owned(),
        "/ws/v1/cluster/metrics/".to_owned(),
        "/ws/v1/cluster/scheduler/".to_owned(),
        "/ws/v1/cluster/nodes/".to_owned(),
        format!("/ws/v1/cluster/apps/{app}/"),
        format!("/ws/v1/cluster/apps/{app}/state/"),
        format!("/ws/v1/cluster/apps/{app}/appattempts/"),
    ] {
        assert_eq!(get(r, &uri).await.status, StatusCode::OK, "{uri}");
    }
    let killed = put(
        r,
        &format!("/ws/v1/cluster/apps/{app}/state/?user.name=alice"),
        json!({"state": "KILLED"}),
    )
    .await;
    assert_eq!(killed.body, r#"{"state":"KILLED"}"#);
    rm.stop().await;
}

/// The value of the one series `series` (name and labels as rendered) in
/// Prometheus text, or `None` when it is not exported.
fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let value = l.strip_prefix(series)?.strip_prefix(' ')?;
        Some(value.parse().unwrap_or_else(|e| panic!("{l:?}: {e}")))
    })
}

/// An RM whose queue `b` starves after a second below its fair share and
/// takes containers back from `a`, with a minute between warning and kill.
fn preempting_rm() -> Rm {
    const ALLOC: &str = r#"<allocations>
  <queue name="a"/>
  <queue name="b">
    <fairSharePreemptionThreshold>1.0</fairSharePreemptionThreshold>
    <fairSharePreemptionTimeout>1</fairSharePreemptionTimeout>
  </queue>
  <queuePlacementPolicy><rule name="specified" create="false"/><rule name="reject"/></queuePlacementPolicy>
</allocations>"#;
    let site = testing::site(&[
        ("yarn.scheduler.fair.preemption", "true"),
        ("yarn.scheduler.fair.waitTimeBeforeKill", "60000"),
    ]);
    let config = crate::config::RmConfig::from_texts(&site, ALLOC).unwrap();
    let service = testing::start(config, testing::EPOCH, testing::FakeGroups::with(&[]));
    Rm::around(service)
}

/// `a`'s app fills a 4 GB node; `b`'s app then starves until preemption
/// warns. Answers `a`'s app, whose AM has made one allocate call.
async fn starve_b(rm: &Rm) -> String {
    rm.register("h1:8041", 4096, 4).await;
    let greedy = rm.running("alice", "a", "h1:8041", 0).await;
    let ask = json!({"responseId": 0, "asks": [{"priority": 1, "resourceName": "*", "capability": {"memory": 1024, "vCores": 1}, "numContainers": 3}]});
    assert_eq!(rm.allocate(&greedy, ask).await.status, StatusCode::OK);
    for id in 1..=3 {
        rm.heartbeat("h1:8041", id, json!([])).await;
    }
    rm.submit("bob", "b").await;
    // Past the update pass and the starvation timeout.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    greedy
}

#[tokio::test(start_paused = true)]
async fn preemption_warnings_count_each_container_once() {
    let rm = preempting_rm();
    let greedy = starve_b(&rm).await;
    // Hadoop's PreemptionMessage repeats the warned containers in every
    // allocate answer until they go: a counter of warnings must not count
    // the same container again on every call.
    let mut warned = 0;
    for id in 1..=4 {
        let a = rm.allocate(&greedy, json!({"responseId": id})).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        warned = a.json()["preemption"]["containers"]
            .as_array()
            .map_or(0, Vec::len);
        assert!(warned > 0, "no preemption warning: {}", a.body);
    }
    let text = get(&rm.router, "/metrics").await.body;
    assert_eq!(
        metric(&text, "weft_scheduler_preemption_warnings_total"),
        Some(warned as f64),
        "{text}"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn scheduler_lag_and_node_heartbeat_age() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    rm.heartbeat("h1:8041", 0, json!([])).await;
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    rm.heartbeat("h2:8041", 0, json!([])).await;
    let text = get(r, "/metrics").await.body;
    // h1 has been silent for 3 s, h2 has just heartbeated: the oldest counts.
    assert_eq!(
        metric(&text, "weft_cluster_node_heartbeat_max_age_seconds"),
        Some(3.0),
        "{text}"
    );
    // The snapshot was just rebuilt, and nothing waits for the scheduler.
    assert_eq!(
        metric(&text, "weft_scheduler_snapshot_age_seconds"),
        Some(0.0)
    );
    assert_eq!(metric(&text, "weft_scheduler_queued_commands"), Some(0.0));
    // The ages are measured at the scrape: a scheduler that stops
    // publishing shows an ever older snapshot, not a frozen figure.
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    let text = get(r, "/metrics").await.body;
    let age = metric(&text, "weft_cluster_node_heartbeat_max_age_seconds").unwrap();
    assert_eq!(age, 4.5, "{text}");
    let snapshot = metric(&text, "weft_scheduler_snapshot_age_seconds").unwrap();
    assert!((0.0..=1.5).contains(&snapshot), "{snapshot}");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn preemption_kills_are_counted_for_the_victims_queue() {
    let rm = preempting_rm();
    let greedy = starve_b(&rm).await;
    let warned =
        rm.allocate(&greedy, json!({"responseId": 1})).await.json()["preemption"]["containers"]
            .as_array()
            .map_or(0, Vec::len) as f64;
    assert!(warned > 0.0);
    // The AM gives nothing back: at the deadline the warned containers go.
    tokio::time::sleep(std::time::Duration::from_secs(61)).await;
    let text = get(&rm.router, "/metrics").await.body;
    for (series, v) in [
        ("weft_scheduler_preemption_warnings_total", warned),
        ("weft_scheduler_preemption_kills_total", warned),
        (
            r#"weft_queue_containers_preempted_total{queue="root.a"}"#,
            warned,
        ),
        (
            r#"weft_queue_containers_preempted_total{queue="root"}"#,
            warned,
        ),
        (
            r#"weft_queue_containers_preempted_total{queue="root.b"}"#,
            0.0,
        ),
    ] {
        assert_eq!(metric(&text, series), Some(v), "{series} in\n{text}");
    }
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_node_reporting_a_preempted_exit_status_is_not_a_preemption_kill() {
    let rm = Rm::new();
    rm.register("h1:8041", 4096, 4).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    let ask = json!({"responseId": 0, "asks": [{"priority": 1, "resourceName": "*", "capability": {"memory": 1024, "vCores": 1}, "numContainers": 1}]});
    assert_eq!(rm.allocate(&app, ask).await.status, StatusCode::OK);
    rm.heartbeat("h1:8041", 1, json!([])).await;
    let got = rm.allocate(&app, json!({"responseId": 1})).await.json();
    let container = got["allocated"][0]["containerId"]
        .as_str()
        .unwrap_or_else(|| panic!("no container: {got}"))
        .to_owned();
    // The node says -102 (preempted) although the RM never preempted it.
    rm.heartbeat(
        "h1:8041",
        2,
        json!([{"containerId": container, "state": "COMPLETE", "exitStatus": -102}]),
    )
    .await;
    let text = get(&rm.router, "/metrics").await.body;
    assert_eq!(
        metric(&text, "weft_scheduler_preemption_kills_total"),
        Some(0.0),
        "{text}"
    );
    rm.stop().await;
}

mod admin_access;
mod am_tokens;
mod app_acls;
mod app_statistics;
mod attempts;
mod audit;
mod conf;
mod decommission;
mod dynamic_resources;
mod explain;
mod history;
mod jmx;
mod lifetime;
mod log_level;
mod node_health;
mod node_resize;
mod topology;
mod ui;
mod utilization;
