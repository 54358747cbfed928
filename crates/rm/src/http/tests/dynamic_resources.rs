//! Router tests of `dynamic-resources.xml`: a node it names registers with
//! its configured size (and says so in the answer), again after an
//! operator's resize; `refresh-nodes-resources` resizes the registered
//! nodes it changes (over-committing one whose containers hold more),
//! remembers the others for when they register, leaves a node it no longer
//! names alone, refuses a bad file with every problem and changes nothing;
//! the admin ACL, and an RM on its built-in configuration.

use super::*;

use crate::dynamic_resources::FILE_NAME;

const URI: &str = "/ws/v1/cluster/refresh-nodes-resources";

/// The test configuration directory, with `dynamic-resources.xml`.
struct ConfDir(TestDir);

impl ConfDir {
    /// The test configuration, with `dynamic` as `dynamic-resources.xml`
    /// when given.
    fn new(name: &str, dynamic: Option<&[(&str, &str)]>) -> ConfDir {
        let conf = ConfDir(TestDir::conf(&format!("dynres-{name}")));
        if let Some(props) = dynamic {
            conf.write(props);
        }
        conf
    }

    /// Writes `dynamic-resources.xml` with `props`.
    fn write(&self, props: &[(&str, &str)]) {
        self.0.write(FILE_NAME, &weft_test_support::site_xml(props));
    }

    fn start(&self) -> Rm {
        self.0.start()
    }

    fn hide(&self, text: &str) -> String {
        self.0.hide(text)
    }
}

/// The properties giving `node` `memory` MB and `vcores`.
fn sized(node: &str, memory: &str, vcores: &str) -> Vec<(String, String)> {
    vec![
        (
            format!("yarn.resource.dynamic.{node}.memory"),
            memory.to_owned(),
        ),
        (
            format!("yarn.resource.dynamic.{node}.vcores"),
            vcores.to_owned(),
        ),
    ]
}

/// A file listing `nodes` with their properties.
fn file(nodes: &str, props: &[Vec<(String, String)>]) -> Vec<(String, String)> {
    let mut all = vec![("yarn.resource.dynamic.nodes".to_owned(), nodes.to_owned())];
    for p in props {
        all.extend(p.iter().cloned());
    }
    all
}

fn borrowed(props: &[(String, String)]) -> Vec<(&str, &str)> {
    props
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// A node's `totalResource` and `usedResource` as `total / used`.
async fn sizes(rm: &Rm, node: &str) -> String {
    let a = get(&rm.router, &format!("/ws/v1/cluster/nodes/{node}")).await;
    let n = &a.json()["node"];
    format!(
        "{}mb,{}vc / {}mb,{}vc",
        n["totalResource"]["memory"],
        n["totalResource"]["vCores"],
        n["usedResource"]["memory"],
        n["usedResource"]["vCores"]
    )
}

/// `POST refresh-nodes-resources` as the administrator.
async fn refresh(rm: &Rm) -> Answer {
    call(
        &rm.router,
        Method::POST,
        &format!("{URI}?user.name=yarn"),
        None,
        "",
        &[],
    )
    .await
}

#[tokio::test(start_paused = true)]
async fn a_named_node_registers_with_its_configured_size() {
    let conf = ConfDir::new(
        "register",
        Some(&borrowed(&file(
            "h1:8041",
            &[sized("h1:8041", "4096", "4")],
        ))),
    );
    let rm = conf.start();
    let a = rm.register("h1:8041", 8192, 8).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // Hadoop's registration answer carries the size the node is given.
    assert_eq!(a.json()["resource"], json!({"memory": 4096, "vCores": 4}));
    assert_eq!(sizes(&rm, "h1:8041").await, "4096mb,4vc / 0mb,0vc");
    let metrics = get(&rm.router, "/ws/v1/cluster/metrics").await.json();
    assert_eq!(metrics["clusterMetrics"]["totalMB"], 4096);

    // A node the file does not name offers what it reports, and is not
    // told anything about its size.
    let a = rm.register("h2:8041", 8192, 8).await;
    assert!(a.json().get("resource").is_none(), "{}", a.body);
    assert_eq!(sizes(&rm, "h2:8041").await, "8192mb,8vc / 0mb,0vc");

    // An operator's resize lasts until the node registers again, which
    // brings back the file's size, or the node's own (Hadoop's reconnect).
    for node in ["h1:8041", "h2:8041"] {
        let resize = post(
            &rm.router,
            &format!("/ws/v1/cluster/nodes/{node}/resource?user.name=yarn"),
            json!({"resource": {"memory": 2048, "vCores": 2}}),
        )
        .await;
        assert_eq!(resize.status, StatusCode::OK, "{}", resize.body);
        assert_eq!(sizes(&rm, node).await, "2048mb,2vc / 0mb,0vc");
        rm.register(node, 8192, 8).await;
    }
    assert_eq!(sizes(&rm, "h1:8041").await, "4096mb,4vc / 0mb,0vc");
    assert_eq!(sizes(&rm, "h2:8041").await, "8192mb,8vc / 0mb,0vc");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_refresh_resizes_registered_nodes_and_remembers_the_others() {
    let conf = ConfDir::new("refresh", None);
    let rm = conf.start();
    // h1: 4 GB holding 3 GB (an AM and two containers); h2: 8 GB, idle.
    assert_eq!(rm.register("h1:8041", 4096, 4).await.status, StatusCode::OK);
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    let ask = json!({"responseId": 0, "asks": [{"priority": 1, "resourceName": "*", "capability": {"memory": 1024, "vCores": 1}, "numContainers": 2}]});
    assert_eq!(rm.allocate(&app, ask).await.status, StatusCode::OK);
    for id in 1..=2 {
        rm.heartbeat("h1:8041", id, json!([])).await;
    }
    assert_eq!(sizes(&rm, "h1:8041").await, "4096mb,4vc / 3072mb,3vc");
    rm.register("h2:8041", 8192, 8).await;

    // Without the file there is nothing to do.
    let a = refresh(&rm).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    expect![[r#"{"refreshNodesResources":{"path":"<dir>/dynamic-resources.xml","found":false,"configuredNodes":0,"changes":[],"notRegistered":[],"warnings":[]}}"#]]
        .assert_eq(&conf.hide(&a.body));

    // h1 shrinks below what it holds, h2 keeps the size it has, h3 waits.
    let mut props = file(
        "h1:8041,h2:8041,h3:8041",
        &[
            sized("h1:8041", "2048", "2"),
            sized("h2:8041", "8192", "8"),
            sized("h3:8041", "4096", "4"),
        ],
    );
    props.push((
        "yarn.resource.dynamic.h1:8041.overcommittimeout".to_owned(),
        "30000".to_owned(),
    ));
    props.push((
        "yarn.resource.dynamic.h9:8041.memory".to_owned(),
        "1".to_owned(),
    ));
    conf.write(&borrowed(&props));
    let a = refresh(&rm).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    expect![[r#"{"refreshNodesResources":{"path":"<dir>/dynamic-resources.xml","found":true,"configuredNodes":3,"changes":[{"nodeId":"h1:8041","previous":{"memory":4096,"vCores":4},"capability":{"memory":2048,"vCores":2},"overcommitted":true,"overCommitTimeout":30000}],"notRegistered":["h3:8041"],"warnings":["<dir>/dynamic-resources.xml: line 10, column 60: property yarn.resource.dynamic.h9:8041.memory is ignored: h9:8041 is not listed in yarn.resource.dynamic.nodes"]}}"#]]
        .assert_eq(&conf.hide(&a.body));
    // Over-committed: it offers what its containers hold, and nothing new.
    assert_eq!(sizes(&rm, "h1:8041").await, "3072mb,3vc / 3072mb,3vc");
    assert_eq!(sizes(&rm, "h2:8041").await, "8192mb,8vc / 0mb,0vc");

    // The same file again changes nothing: h1 is on its way to its size.
    let a = refresh(&rm).await;
    assert_eq!(a.json()["refreshNodesResources"]["changes"], json!([]));
    assert_eq!(
        a.json()["refreshNodesResources"]["notRegistered"],
        json!(["h3:8041"])
    );

    // h3 registers with its configured size.
    let a = rm.register("h3:8041", 8192, 8).await;
    assert_eq!(a.json()["resource"], json!({"memory": 4096, "vCores": 4}));
    assert_eq!(sizes(&rm, "h3:8041").await, "4096mb,4vc / 0mb,0vc");

    // At the timeout the newest container past the new size stops.
    tokio::time::sleep(std::time::Duration::from_secs(31)).await;
    let hb = rm.heartbeat("h1:8041", 3, json!([])).await.json();
    assert_eq!(
        hb["containersToStop"].as_array().map(Vec::len),
        Some(1),
        "{hb}"
    );
    assert_eq!(sizes(&rm, "h1:8041").await, "2048mb,2vc / 2048mb,2vc");

    // A node the file no longer names keeps its size until it registers
    // again, as in Hadoop; so does every node when the file goes.
    conf.write(&borrowed(&file(
        "h3:8041",
        &[sized("h3:8041", "4096", "4")],
    )));
    let a = refresh(&rm).await;
    assert_eq!(a.json()["refreshNodesResources"]["changes"], json!([]));
    std::fs::remove_file(conf.0.path(FILE_NAME)).unwrap();
    let a = refresh(&rm).await;
    assert_eq!(a.json()["refreshNodesResources"]["found"], false);
    assert_eq!(sizes(&rm, "h1:8041").await, "2048mb,2vc / 2048mb,2vc");
    assert_eq!(sizes(&rm, "h3:8041").await, "4096mb,4vc / 0mb,0vc");
    rm.register("h3:8041", 8192, 8).await;
    assert_eq!(sizes(&rm, "h3:8041").await, "8192mb,8vc / 0mb,0vc");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_bad_file_is_refused_with_every_problem_and_changes_nothing() {
    let conf = ConfDir::new(
        "bad",
        Some(&borrowed(&file(
            "h1:8041",
            &[sized("h1:8041", "4096", "4")],
        ))),
    );
    let rm = conf.start();
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    let mut props = file(
        "h1:8041,h2:8041,h3",
        &[
            sized("h1:8041", "2048", "2"),
            sized("h2:8041", "lots", "-2"),
        ],
    );
    props.push((
        "yarn.resource.dynamic.h9:8041.memory".to_owned(),
        "1".to_owned(),
    ));
    conf.write(&borrowed(&props));
    let a = refresh(&rm).await;
    expect![[r#"
        400 BadRequestException: the dynamic resources file <dir>/dynamic-resources.xml is invalid, so none of it is used:
          line 2, column 51: property yarn.resource.dynamic.nodes: "h3" is not a node id: write host:port, as the node registers
          line 5, column 60: property yarn.resource.dynamic.h2:8041.memory: "lots" is not a whole number of MB
          line 6, column 60: property yarn.resource.dynamic.h2:8041.vcores: -2 is negative: a size is a whole number of vcores from 1
        (nothing changed: the sizes in force stay)"#]]
    .assert_eq(&conf.hide(&a.error()));
    // h1 keeps the size of the file in force, now and when it registers.
    assert_eq!(sizes(&rm, "h1:8041").await, "4096mb,4vc / 0mb,0vc");
    rm.register("h1:8041", 8192, 8).await;
    assert_eq!(sizes(&rm, "h1:8041").await, "4096mb,4vc / 0mb,0vc");
    assert_eq!(sizes(&rm, "h2:8041").await, "8192mb,8vc / 0mb,0vc");

    // A file that cannot be read is refused too.
    std::fs::remove_file(conf.0.path(FILE_NAME)).unwrap();
    std::fs::create_dir(conf.0.path(FILE_NAME)).unwrap();
    expect![[r#"
        400 BadRequestException: cannot read the dynamic resources file <dir>/dynamic-resources.xml: not a regular file
        (nothing changed: the sizes in force stay)"#]]
    .assert_eq(&conf.hide(&refresh(&rm).await.error()));
    rm.register("h1:8041", 8192, 8).await;
    assert_eq!(sizes(&rm, "h1:8041").await, "4096mb,4vc / 0mb,0vc");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn refreshing_is_for_admins_with_a_configuration_directory() {
    let conf = ConfDir::new(
        "admins",
        Some(&borrowed(&file(
            "h1:8041",
            &[sized("h1:8041", "2048", "2")],
        ))),
    );
    let rm = conf.start();
    rm.register("h1:8041", 4096, 4).await;
    conf.write(&borrowed(&file(
        "h1:8041",
        &[sized("h1:8041", "1024", "1")],
    )));
    refresh_is_for_admins(&rm.router, URI, "the nodes' resources").await;
    // Refused callers changed nothing.
    assert_eq!(sizes(&rm, "h1:8041").await, "2048mb,2vc / 0mb,0vc");
    rm.stop().await;

    // The built-in configuration has no directory to read the file from.
    let rm = Rm::new();
    expect![[r#"400 BadRequestException: the resource manager runs on its built-in configuration and has no dynamic-resources.xml to read; start it with --conf DIR"#]]
        .assert_eq(&refresh(&rm).await.error());
    rm.stop().await;
}
