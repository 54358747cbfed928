//! Router tests of the web UI: each page is HTML with the facts of a small
//! cluster (two nodes, apps running in two queues, one finished), user
//! strings are escaped and only http(s) URLs linked, bad ids, states and
//! refresh values get HTML error pages with the REST API's words, and the
//! states filter and `?refresh=` work as documented.

use super::*;

/// Two nodes (h1 with 8 GB, h2 with 4 GB); alice's app running in root.a
/// and bob's in root.b, each asking for more; carol's app finished in
/// root.b; fair shares computed.
struct Cluster {
    rm: Rm,
    alice: String,
    bob: String,
    carol: String,
}

async fn small_cluster() -> Cluster {
    let rm = Rm::new();
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 4096, 4).await;
    let alice = rm.running("alice", "a", "h1:8041", 0).await;
    let bob = rm.running("bob", "b", "h2:8041", 0).await;
    let carol = rm.running("carol", "b", "h1:8041", 1).await;
    let fin = rm
        .am(
            &carol,
            "finish",
            json!({"finalStatus": "SUCCEEDED", "diagnostics": "all 3 tasks done"}),
        )
        .await;
    assert_eq!(fin.status, StatusCode::OK, "{}", fin.body);
    let ask = |n| json!({"responseId": 0, "asks": [{"priority": 1, "capability": {"memory": 1024, "vCores": 1}, "numContainers": n}]});
    rm.allocate(&alice, ask(6)).await;
    rm.allocate(&bob, ask(2)).await;
    // Let the update pass compute fair shares.
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    Cluster {
        rm,
        alice,
        bob,
        carol,
    }
}

/// `GET uri`, which must be a 200 HTML page with the frame every page has.
async fn page(r: &Router, uri: &str) -> String {
    let a = get(r, uri).await;
    assert_eq!(a.status, StatusCode::OK, "{uri}: {}", a.body);
    assert_html(uri, &a);
    a.body
}

fn assert_html(uri: &str, a: &Answer) {
    assert_eq!(
        a.headers["content-type"], "text/html; charset=utf-8",
        "{uri}"
    );
    assert!(
        a.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("default-src 'none'"),
        "{uri}"
    );
    for nav in [
        r#"<a href="/cluster""#,
        r#"<a href="/cluster/scheduler""#,
        r#"<a href="/cluster/apps""#,
        r#"<a href="/cluster/nodes""#,
        "cluster 1700000000000 \u{b7} started 2023-11-14T22:13:20Z",
    ] {
        assert!(a.body.contains(nav), "{uri}: no {nav:?} in {}", a.body);
    }
    assert!(a.body.starts_with("<!DOCTYPE html>"), "{uri}");
    assert!(!a.body.contains("<script"), "{uri}");
}

/// The part of `body` from the first `start` to the end of the next `end`,
/// a line per table row.
fn fragment(body: &str, start: &str, end: &str) -> String {
    let from = body
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in {body}"));
    let len = body[from..]
        .find(end)
        .unwrap_or_else(|| panic!("no {end:?} after {start:?} in {body}"));
    body[from..from + len + end.len()].replace("</tr>", "</tr>\n")
}

/// Each link to an app page in `body`, in order.
fn app_links(body: &str) -> Vec<&str> {
    body.split(r#"<a href="/cluster/app/"#)
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn the_root_redirects_to_the_overview() {
    let rm = Rm::new();
    let a = get(&rm.router, "/").await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    assert_eq!(a.headers["location"], "/cluster");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_overview_shows_metrics_queues_and_recent_apps() {
    let c = small_cluster().await;
    let r = &c.rm.router;
    let body = page(r, "/cluster").await;
    for fact in [
        "<title>Cluster - Weft</title>",
        // Two nodes, 12 GB and 12 vcores between them; two of the three
        // apps running.
        r#"<caption>Nodes</caption><tr><th><a href="/cluster/nodes">Total</a></th><td class="num">2</td></tr>"#,
        r#"<tr><th>Total</th><td class="num">12.0 GB</td><td class="num">12</td></tr>"#,
        r#"<tr><th><a href="/cluster/apps/RUNNING">Running</a></th><td class="num">2</td></tr>"#,
        r#"<tr><th><a href="/cluster/apps">Submitted</a></th><td class="num">3</td></tr>"#,
        r#"Recent applications"#,
        r#"<a href="/ws/v1/cluster/metrics">"#,
    ] {
        assert!(body.contains(fact), "no {fact:?} in {body}");
    }
    // Newest first.
    assert_eq!(app_links(&body), [c.carol.as_str(), &c.bob, &c.alice]);
    expect![[r#"
        <table class="queues"><tr><th>Queue</th><th>Used</th><th>Instantaneous fair share</th><th>Used / fair share</th><th>Apps active / pending</th></tr>
        <tr class="parent"><td id="queue-root" style="padding-left:0.5em" title="root">root</td><td class="num">2.0 GB, 2 vcores</td><td class="num">12.0 GB, 12 vcores</td><td><span class="bar"><span style="width:17%"></span></span> 16.7%</td><td class="num">2 / 0</td></tr>
        <tr class="leaf"><td id="queue-root.a" style="padding-left:2em" title="root.a"><a href="/cluster/apps?queue=root.a">a</a></td><td class="num">1.0 GB, 1 vcore</td><td class="num">9.0 GB, 0 vcores</td><td><span class="bar"><span style="width:11%"></span></span> 11.1%</td><td class="num">1 / 0</td></tr>
        <tr class="leaf"><td id="queue-root.b" style="padding-left:2em" title="root.b"><a href="/cluster/apps?queue=root.b">b</a></td><td class="num">1.0 GB, 1 vcore</td><td class="num">3.0 GB, 0 vcores</td><td><span class="bar"><span style="width:33%"></span></span> 33.3%</td><td class="num">1 / 0</td></tr>
        <tr class="leaf"><td id="queue-root.default" style="padding-left:2em" title="root.default"><a href="/cluster/apps?queue=root.default">default</a></td><td class="num">0 MB, 0 vcores</td><td class="num">0 MB, 0 vcores</td><td><span class="muted">idle</span></td><td class="num">0 / 0</td></tr>
        <tr class="parent"><td id="queue-root.p" style="padding-left:2em" title="root.p">p</td><td class="num">0 MB, 0 vcores</td><td class="num">0 MB, 0 vcores</td><td><span class="muted">idle</span></td><td class="num">0 / 0</td></tr>
        </table>"#]]
    .assert_eq(&fragment(&body, r#"<table class="queues">"#, "</table>"));
    c.rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_scheduler_page_shows_every_queue_and_the_allocation_file() {
    let c = small_cluster().await;
    let r = &c.rm.router;
    let body = page(r, "/cluster/scheduler").await;
    expect![[r#"
        <table class="queues"><tr><th>Queue</th><th>Policy</th><th>Weight</th><th>Min resources</th><th>Max resources</th><th>Steady fair share</th><th>Instantaneous fair share</th><th>Used</th><th>Used / fair share</th><th>Demand</th><th>Apps active / pending</th><th>Max running apps</th><th>AM used / limit</th><th>Max AM share</th></tr>
        <tr class="parent"><td id="queue-root" style="padding-left:0.5em" title="root">root</td><td>fair</td><td class="num">1</td><td class="num">0 MB, 0 vcores</td><td class="num">12.0 GB, 12 vcores</td><td class="num">12.0 GB, 12 vcores</td><td class="num">12.0 GB, 12 vcores</td><td class="num">2.0 GB, 2 vcores</td><td><span class="bar"><span style="width:17%"></span></span> 16.7%</td><td class="num">10.0 GB, 10 vcores</td><td class="num">2 / 0</td><td class="num">unlimited</td><td></td><td></td></tr>
        <tr class="leaf"><td id="queue-root.a" style="padding-left:2em" title="root.a"><a href="/cluster/apps?queue=root.a">a</a></td><td>fair</td><td class="num">3</td><td class="num">0 MB, 0 vcores</td><td class="num">12.0 GB, 12 vcores</td><td class="num">6.0 GB, 0 vcores</td><td class="num">9.0 GB, 0 vcores</td><td class="num">1.0 GB, 1 vcore</td><td><span class="bar"><span style="width:11%"></span></span> 11.1%</td><td class="num">7.0 GB, 7 vcores</td><td class="num">1 / 0</td><td class="num">unlimited</td><td class="num">1.0 GB / 4.5 GB</td><td class="num">0.5</td></tr>
        <tr class="leaf"><td id="queue-root.b" style="padding-left:2em" title="root.b"><a href="/cluster/apps?queue=root.b">b</a></td><td>fair</td><td class="num">1</td><td class="num">0 MB, 0 vcores</td><td class="num">12.0 GB, 12 vcores</td><td class="num">2.0 GB, 0 vcores</td><td class="num">3.0 GB, 0 vcores</td><td class="num">1.0 GB, 1 vcore</td><td><span class="bar"><span style="width:33%"></span></span> 33.3%</td><td class="num">3.0 GB, 3 vcores</td><td class="num">1 / 0</td><td class="num">unlimited</td><td class="num">1.0 GB / 1.5 GB</td><td class="num">0.5</td></tr>
        <tr class="leaf"><td id="queue-root.default" style="padding-left:2em" title="root.default"><a href="/cluster/apps?queue=root.default">default</a></td><td>fair</td><td class="num">1</td><td class="num">0 MB, 0 vcores</td><td class="num">12.0 GB, 12 vcores</td><td class="num">2.0 GB, 0 vcores</td><td class="num">0 MB, 0 vcores</td><td class="num">0 MB, 0 vcores</td><td><span class="muted">idle</span></td><td class="num">0 MB, 0 vcores</td><td class="num">0 / 0</td><td class="num">unlimited</td><td class="num">0 MB / 5.0 GB</td><td class="num">0.5</td></tr>
        <tr class="parent"><td id="queue-root.p" style="padding-left:2em" title="root.p">p</td><td>fair</td><td class="num">1</td><td class="num">0 MB, 0 vcores</td><td class="num">12.0 GB, 12 vcores</td><td class="num">2.0 GB, 0 vcores</td><td class="num">0 MB, 0 vcores</td><td class="num">0 MB, 0 vcores</td><td><span class="muted">idle</span></td><td class="num">0 MB, 0 vcores</td><td class="num">0 / 0</td><td class="num">unlimited</td><td></td><td></td></tr>
        </table>"#]]
    .assert_eq(&fragment(&body, r#"<table class="queues">"#, "</table>"));
    for fact in [
        "<tr><th>File</th><td>none: the built-in configuration, not watched</td></tr>",
        "<tr><th>Loads succeeded</th><td>1</td></tr>",
        "<tr><th>Last error</th><td>none: the configuration in force is the file&#39;s</td></tr>",
        r#"<a href="/ws/v1/cluster/scheduler">"#,
    ] {
        assert!(body.contains(fact), "no {fact:?} in {body}");
    }
    c.rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_apps_page_lists_newest_first_and_filters_by_state() {
    let c = small_cluster().await;
    let r = &c.rm.router;
    let body = page(r, "/cluster/apps").await;
    assert!(
        body.contains("<p>3 applications, newest first.</p>"),
        "{body}"
    );
    assert_eq!(app_links(&body), [c.carol.as_str(), &c.bob, &c.alice]);
    let row = fragment(
        &body,
        &format!(r#"<tr><td><a href="/cluster/app/{}""#, c.carol),
        "</tr>",
    );
    expect![[r#"
        <tr><td><a href="/cluster/app/application_1700000000000_0003">application_1700000000000_0003</a></td><td>carol</td><td>job</td><td>YARN</td><td><a href="/cluster/scheduler#queue-root.b">root.b</a></td><td class="num">0</td><td>2023-11-14T22:13:20Z</td><td>2023-11-14T22:13:20Z</td><td>FINISHED</td><td>SUCCEEDED</td><td class="num">0</td><td class="num">0 MB, 0 vcores</td><td class="num">100.0%</td><td>History</td></tr>
    "#]]
    .assert_eq(&row);

    // The REST list's states filter, any case, in the query or (Hadoop's
    // form) in the path.
    for uri in [
        "/cluster/apps?states=running",
        "/cluster/apps/RUNNING",
        "/cluster/apps/running/",
    ] {
        let body = page(r, uri).await;
        assert_eq!(app_links(&body), [c.bob.as_str(), &c.alice], "{uri}");
        assert!(body.contains("<h1>Applications: RUNNING</h1>"), "{uri}");
        assert!(
            body.contains(r#"<a href="/cluster/apps/RUNNING" class="on">RUNNING</a>"#),
            "{uri}"
        );
    }
    let body = page(r, "/cluster/apps/FINISHED?states=KILLED").await;
    assert_eq!(app_links(&body), [c.carol.as_str()]);
    assert!(body.contains("<h1>Applications: FINISHED, KILLED</h1>"));
    // The REST list's other filters come along.
    let body = page(r, "/cluster/apps?user=alice").await;
    assert_eq!(app_links(&body), [c.alice.as_str()]);
    let body = page(r, "/cluster/apps?queue=b").await;
    assert_eq!(app_links(&body), [c.bob.as_str()]);
    let body = page(r, "/cluster/apps/KILLED").await;
    assert!(body.contains("No applications."));
    c.rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_app_page_shows_the_app_and_its_attempt() {
    let c = small_cluster().await;
    let r = &c.rm.router;
    let body = page(r, &format!("/cluster/app/{}", c.carol)).await;
    for fact in [
        "<h1>Application application_1700000000000_0003</h1>",
        r#"<tr><th>Queue</th><td><a href="/cluster/scheduler#queue-root.b">root.b</a></td></tr>"#,
        "<tr><th>User</th><td>carol</td></tr>",
        "<tr><th>State</th><td>FINISHED</td></tr>",
        "<tr><th>Final status</th><td>SUCCEEDED</td></tr>",
        "<tr><th>Started</th><td>2023-11-14T22:13:20Z</td></tr>",
        "<tr><th>Tags</th><td>none</td></tr>",
        "<tr><th>Tracking URL</th><td>none</td></tr>",
        "<h2>Diagnostics</h2><pre>all 3 tasks done</pre>",
        r#"<td>appattempt_1700000000000_0003_000001</td><td>FINISHED</td>"#,
        r#"<a href="/ws/v1/cluster/apps/application_1700000000000_0003">"#,
    ] {
        assert!(body.contains(fact), "no {fact:?} in {body}");
    }
    assert!(
        !body.contains("Why it is waiting"),
        "an ended app waits for nothing: {body}"
    );
    let body = page(r, &format!("/cluster/app/{}", c.alice)).await;
    for fact in [
        "<tr><th>State</th><td>RUNNING</td></tr>",
        "<tr><th>Finished</th><td>N/A</td></tr>",
        "<tr><th>Allocated</th><td>1.0 GB, 1 vcore</td></tr>",
        "<tr><th>Pending</th><td>6.0 GB, 6 vcores</td></tr>",
        "<tr><th>Running containers</th><td>1</td></tr>",
        "<h2>Diagnostics</h2><pre>running</pre>",
        r#"<td>appattempt_1700000000000_0001_000001</td><td>RUNNING</td>"#,
        r#"<td>container_1700000000000_0001_01_000001</td><td><a href="/cluster/node/h1:8041">h1:8041</a></td><td>h1:8042</td>"#,
        "<tr><th>AM node web address</th><td>h1:8042</td></tr>",
    ] {
        assert!(body.contains(fact), "no {fact:?} in {body}");
    }
    // The launch context (the AM's command) is never shown.
    assert!(!body.contains("run-am"), "{body}");
    // Why it waits, as `.../explain` says, every word escaped: both nodes
    // have room for alice's asks.
    expect![[r#"
        <h2 id="why">Why it is waiting</h2><p class="summary">not held back: h1:8041 (off-switch), h2:8041 (off-switch) can take its ask at priority 1 for 6 × &lt;memory:1024, vCores:1&gt; now, at the node&#39;s next heartbeat unless applications ahead of it in policy order take the room first</p><table class="reasons"><tr><th>Applies to</th><th>Holds it back</th><th>Why</th><th>What would change it</th></tr>
        <tr><td>priority 1: 6 × 1.0 GB, 1 vcore</td><td>no</td><td>h1:8041 (off-switch), h2:8041 (off-switch) have room for it now</td><td>nothing: such a node serves it at its next heartbeat, after applications ahead of it in policy order</td></tr>
        </table>"#]]
    .assert_eq(&fragment(&body, r#"<h2 id="why">"#, "</table>"));
    assert!(!body.contains("<memory:"), "{body}");
    c.rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_held_back_app_page_says_what_holds_it() {
    let rm = Rm::new();
    rm.register("h1:8041", 2048, 2).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    rm.allocate(
        &app,
        json!({"responseId": 0, "asks": [{"priority": 1, "capability": {"memory": 4096, "vCores": 1}, "numContainers": 1}]}),
    )
    .await;
    let body = page(&rm.router, &format!("/cluster/app/{app}")).await;
    expect![[r#"
        <h2 id="why">Why it is waiting</h2><p class="summary">waiting (ask at priority 1 for 1 × &lt;memory:4096, vCores:1&gt;): no node can ever hold a container of &lt;memory:4096, vCores:1&gt; (the largest, h1:8041, offers &lt;memory:2048, vCores:2&gt;)</p><table class="reasons"><tr><th>Applies to</th><th>Holds it back</th><th>Why</th><th>What would change it</th></tr>
        <tr><td>priority 1: 1 × 4.0 GB, 1 vcore</td><td>yes</td><td>no node in service could hold &lt;memory:4096, vCores:1&gt; even when empty: the largest, h1:8041, offers &lt;memory:2048, vCores:2&gt;</td><td>a smaller ask, or a node large enough joining the cluster</td></tr>
        </table>"#]]
    .assert_eq(&fragment(&body, r#"<h2 id="why">"#, "</table>"));
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_nodes_pages_show_state_usage_and_filter() {
    let c = small_cluster().await;
    let r = &c.rm.router;
    let body = page(r, "/cluster/nodes").await;
    assert!(body.contains("<p>2 nodes.</p>"), "{body}");
    expect![[r#"
        <tr><td><a href="/cluster/node/h2:8041">h2:8041</a></td><td>/r1</td><td>RUNNING</td><td></td><td>2023-11-14T22:13:20Z</td><td class="num">1</td><td class="num">1.0 GB / 4.0 GB</td><td class="num">1 / 4</td><td class="num"></td><td class="num">not reported</td><td></td><td>h2:8042</td></tr>
    "#]]
    .assert_eq(&fragment(&body, r#"<tr><td><a href="/cluster/node/h2:8041""#, "</tr>"));
    let body = page(r, "/cluster/nodes?states=running,unhealthy").await;
    assert!(body.contains("<p>2 nodes.</p>"), "{body}");
    let body = page(r, "/cluster/nodes/DECOMMISSIONED").await;
    assert!(body.contains("No nodes."), "{body}");
    assert!(body.contains("<h1>Nodes: DECOMMISSIONED</h1>"), "{body}");

    let body = page(r, "/cluster/node/h1:8041").await;
    for fact in [
        "<h1>Node h1:8041</h1>",
        "<tr><th>State</th><td>RUNNING</td></tr>",
        "<tr><th>Capability</th><td>8.0 GB, 8 vcores</td></tr>",
        "<tr><th>Health report</th><td>none</td></tr>",
        "Application masters running here",
    ] {
        assert!(body.contains(fact), "no {fact:?} in {body}");
    }
    // Alice's AM runs on h1; carol's ran there, but her app ended.
    assert_eq!(app_links(&body), [c.alice.as_str()]);
    c.rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn user_strings_are_escaped_and_only_web_urls_linked() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    let app = rm.new_app("mallory").await;
    let a = post(
        r,
        "/ws/v1/cluster/apps?user.name=mallory",
        json!({"application-id": app, "application-name": "<script>alert(\"owned\")</script>",
               "application-type": "<b>type</b>", "queue": "b",
               "application-tags": {"tag": ["<i>tag</i>", "x\"y"]}}),
    )
    .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    let hb = rm.heartbeat("h1:8041", 0, json!([])).await;
    assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
    let reg = rm
        .am(
            &app,
            "register",
            json!({"host": "<am>", "rpcPort": 1, "trackingUrl": "javascript:alert(1)"}),
        )
        .await;
    assert_eq!(reg.status, StatusCode::OK, "{}", reg.body);
    // A node's health report is the health script's words.
    let hb = post(
        r,
        "/ws/v1/nm/heartbeat",
        json!({"nodeId": "h1:8041", "responseId": 1, "containers": [],
               "nodeHealthStatus": {"isNodeHealthy": false, "healthReport": "disk <img src=x onerror=alert(1)> full"}}),
    )
    .await;
    assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);

    for uri in [
        "/cluster".to_owned(),
        "/cluster/apps".to_owned(),
        format!("/cluster/app/{app}"),
        "/cluster/nodes".to_owned(),
        "/cluster/node/h1:8041".to_owned(),
    ] {
        let body = page(r, &uri).await;
        for raw in ["<script", "<b>", "<i>", "<img", "<am>", "javascript:"] {
            if raw == "javascript:" {
                assert!(!body.contains("href=\"javascript:"), "{uri}: {body}");
            } else {
                assert!(!body.contains(raw), "{uri}: {raw} in {body}");
            }
        }
    }
    let body = page(r, &format!("/cluster/app/{app}")).await;
    for fact in [
        "<tr><th>Name</th><td>&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;</td></tr>",
        "<tr><th>Type</th><td>&lt;b&gt;type&lt;/b&gt;</td></tr>",
        "<tr><th>Tags</th><td>&lt;i&gt;tag&lt;/i&gt;, x&quot;y</td></tr>",
        "<tr><th>AM RPC address</th><td>&lt;am&gt;:1</td></tr>",
        r#"<tr><th>Tracking URL</th><td>javascript:alert(1)<span class="muted"> (not an http(s) URL, so not linked)</span></td></tr>"#,
    ] {
        assert!(body.contains(fact), "no {fact:?} in {body}");
    }
    let body = page(r, "/cluster/nodes").await;
    assert!(
        body.contains("<td>UNHEALTHY</td><td>disk &lt;img src=x onerror=alert(1)&gt; full</td>"),
        "{body}"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_web_tracking_url_is_linked_and_escaped() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    let app = rm.submit("alice", "a").await;
    rm.heartbeat("h1:8041", 0, json!([])).await;
    let reg = rm
        .am(
            &app,
            "register",
            json!({"trackingUrl": "http://am.example:8080/ui?a=1&b=\"2\""}),
        )
        .await;
    assert_eq!(reg.status, StatusCode::OK, "{}", reg.body);
    let body = page(r, &format!("/cluster/app/{app}")).await;
    let link = r#"<a href="http://am.example:8080/ui?a=1&amp;b=&quot;2&quot;">"#;
    assert!(
        body.contains(&format!("<tr><th>Tracking URL</th><td>{link}http://am.example:8080/ui?a=1&amp;b=&quot;2&quot;</a></td></tr>")),
        "{body}"
    );
    let body = page(r, "/cluster/apps").await;
    assert!(
        body.contains(&format!("<td>{link}ApplicationMaster</a></td>")),
        "{body}"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn bad_requests_get_html_pages_with_the_rest_apis_words() {
    let rm = Rm::new();
    let r = &rm.router;
    let cases = [
        "/cluster/apps?states=RUNNING,BOGUS",
        "/cluster/apps/BOGUS",
        "/cluster/apps?limit=0",
        "/cluster/nodes?states=sleeping",
        "/cluster/nodes/sleeping",
        "/cluster/app/application_1700000000000_9999",
        "/cluster/app/app_1",
        "/cluster/node/h9:8041",
        "/cluster/node/h9",
        "/cluster/queues",
        "/cluster/app/application_1700000000000_9999/extra",
        "/cluster?refresh=0",
        "/cluster/scheduler?refresh=3601",
        "/cluster/nodes?refresh=soon",
    ];
    let mut rendered = String::new();
    for uri in cases {
        let a = get(r, uri).await;
        assert_html(uri, &a);
        let message = fragment(&a.body, r#"<div class="error"><p>"#, "</p>");
        let title = fragment(&a.body, "<h1>", "</h1>");
        rendered.push_str(&format!("{uri}\n  {title} {message}\n"));
    }
    expect![[r#"
        /cluster/apps?states=RUNNING,BOGUS
          <h1>400 Bad Request</h1> <div class="error"><p>states: invalid application state &quot;BOGUS&quot;; expected one of NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED</p>
        /cluster/apps/BOGUS
          <h1>400 Bad Request</h1> <div class="error"><p>states: invalid application state &quot;BOGUS&quot;; expected one of NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED</p>
        /cluster/apps?limit=0
          <h1>400 Bad Request</h1> <div class="error"><p>limit: &quot;0&quot; is not a limit: expected a positive integer</p>
        /cluster/nodes?states=sleeping
          <h1>400 Bad Request</h1> <div class="error"><p>states: invalid node state &quot;sleeping&quot;; expected one of NEW, RUNNING, UNHEALTHY, DECOMMISSIONING, DECOMMISSIONED, LOST, REBOOTED, SHUTDOWN</p>
        /cluster/nodes/sleeping
          <h1>400 Bad Request</h1> <div class="error"><p>states: invalid node state &quot;sleeping&quot;; expected one of NEW, RUNNING, UNHEALTHY, DECOMMISSIONING, DECOMMISSIONED, LOST, REBOOTED, SHUTDOWN</p>
        /cluster/app/application_1700000000000_9999
          <h1>404 Not Found</h1> <div class="error"><p>application application_1700000000000_9999 is not known</p>
        /cluster/app/app_1
          <h1>400 Bad Request</h1> <div class="error"><p>invalid application id &quot;app_1&quot;: expected application_&lt;clusterTimestamp&gt;_&lt;sequence&gt;</p>
        /cluster/node/h9:8041
          <h1>404 Not Found</h1> <div class="error"><p>node h9:8041 is not known</p>
        /cluster/node/h9
          <h1>400 Bad Request</h1> <div class="error"><p>invalid node id &quot;h9&quot;: expected host:port</p>
        /cluster/queues
          <h1>404 Not Found</h1> <div class="error"><p>no such page: /cluster/queues; the pages are /cluster, /cluster/scheduler, /cluster/apps, /cluster/app/{appId}, /cluster/nodes and /cluster/node/{nodeId}</p>
        /cluster/app/application_1700000000000_9999/extra
          <h1>404 Not Found</h1> <div class="error"><p>no such page: /cluster/app/application_1700000000000_9999/extra; the pages are /cluster, /cluster/scheduler, /cluster/apps, /cluster/app/{appId}, /cluster/nodes and /cluster/node/{nodeId}</p>
        /cluster?refresh=0
          <h1>400 Bad Request</h1> <div class="error"><p>refresh: &quot;0&quot; is not a number of seconds from 1 to 3600</p>
        /cluster/scheduler?refresh=3601
          <h1>400 Bad Request</h1> <div class="error"><p>refresh: &quot;3601&quot; is not a number of seconds from 1 to 3600</p>
        /cluster/nodes?refresh=soon
          <h1>400 Bad Request</h1> <div class="error"><p>refresh: &quot;soon&quot; is not a number of seconds from 1 to 3600</p>
    "#]]
    .assert_eq(&rendered);
    // The status is the REST API's too.
    assert_eq!(
        get(r, "/cluster/app/application_1700000000000_9999")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(r, "/cluster/apps/BOGUS").await.status,
        StatusCode::BAD_REQUEST
    );
    // Paths outside the UI keep the REST API's JSON 404.
    assert_eq!(
        get(r, "/nope").await.error(),
        "404 NotFoundException: no such resource: GET /nope (see docs/api.md for the endpoints)"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn refresh_adds_a_meta_refresh() {
    let rm = Rm::new();
    let r = &rm.router;
    let meta = r#"<meta http-equiv="refresh" content="5">"#;
    for uri in [
        "/cluster?refresh=5",
        "/cluster/scheduler?refresh=5",
        "/cluster/apps?states=RUNNING&refresh=5",
        "/cluster/nodes?refresh=5",
    ] {
        assert!(page(r, uri).await.contains(meta), "{uri}");
    }
    for uri in ["/cluster", "/cluster/apps?refresh="] {
        assert!(!page(r, uri).await.contains("http-equiv"), "{uri}");
    }
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_refused_app_shows_why_and_no_attempt() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = rm.new_app("bob").await;
    assert_eq!(
        rm.submit_to("bob", &app, "nosuch").await.status,
        StatusCode::ACCEPTED
    );
    let body = page(r, &format!("/cluster/app/{app}")).await;
    let rest = get(r, &format!("/ws/v1/cluster/apps/{app}")).await.json();
    let diagnostics = rest["app"]["diagnostics"].as_str().unwrap();
    assert!(!diagnostics.is_empty());
    for fact in [
        "<tr><th>State</th><td>FAILED</td></tr>".to_owned(),
        "<tr><th>Final status</th><td>FAILED</td></tr>".to_owned(),
        format!("<h2>Diagnostics</h2><pre>{diagnostics}</pre>"),
        "None: the scheduler refused the application before it had one.".to_owned(),
    ] {
        assert!(body.contains(&fact), "no {fact:?} in {body}");
    }
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_app_page_shows_its_lifetime() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = rm.new_app("alice").await;
    let a = post(
        r,
        "/ws/v1/cluster/apps?user.name=alice",
        json!({"application-id": app, "application-name": "job", "queue": "a",
               "resource": {"memory": 1024, "vCores": 1},
               "am-container-spec": {"commands": {"command": "run-am"}},
               "application-timeouts": {"LIFETIME": 600}}),
    )
    .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    let body = page(r, &format!("/cluster/app/{app}")).await;
    let fact =
        "<tr><th>Lifetime</th><td>expires 2023-11-14T22:23:20.000+0000 (600 s left)</td></tr>";
    assert!(body.contains(fact), "no {fact:?} in {body}");
    let other = rm.submit("bob", "a").await;
    let body = page(r, &format!("/cluster/app/{other}")).await;
    let fact = "<tr><th>Lifetime</th><td>unlimited</td></tr>";
    assert!(body.contains(fact), "no {fact:?} in {body}");
    rm.stop().await;
}
