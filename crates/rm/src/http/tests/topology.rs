//! Router tests of racks resolved by the RM: with a topology table or
//! script configured, a registering node lands in the rack the mapping
//! gives its host, whatever rack it declares; a failing or hung script puts
//! it in `/default-rack` and the registration still succeeds; without a
//! mapping the declared rack stands.

use std::os::unix::fs::PermissionsExt as _;

use super::*;

/// The rack the RM has `node` in.
async fn rack_of(rm: &Rm, node: &str) -> String {
    let a = get(&rm.router, &format!("/ws/v1/cluster/nodes/{node}")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.json()["node"]["rack"].as_str().unwrap().to_owned()
}

/// Registers `node` declaring `rack` (`None`: declaring none).
async fn register_in(rm: &Rm, node: &str, rack: Option<&str>) -> Answer {
    let mut body = json!({"nodeId": node, "capability": {"memory": 4096, "vCores": 4}});
    if let Some(rack) = rack {
        body["rack"] = json!(rack);
    }
    post(&rm.router, "/ws/v1/nm/register", body).await
}

/// An executable `#!/bin/sh` script with `body` in `dir`.
fn script(dir: &TestDir, body: &str) -> String {
    let path = dir.write("rack.sh", &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test(start_paused = true)]
async fn a_table_places_nodes_whatever_they_declare() {
    let dir = TestDir::new("topology-table");
    let table = dir.write(
        "topology.data",
        "10.0.0.1 /dc1/rack1\n10.0.0.2 /dc1/rack2\n",
    );
    let rm = Rm::with(&[
        (
            "net.topology.node.switch.mapping.impl",
            "org.apache.hadoop.net.TableMapping",
        ),
        ("net.topology.table.file.name", &table),
    ]);
    for (node, declared) in [
        ("10.0.0.1:8041", Some("/r1")),
        ("10.0.0.2:8041", None),
        ("10.0.0.3:8041", Some("/r1")),
    ] {
        let a = register_in(&rm, node, declared).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    }
    assert_eq!(rack_of(&rm, "10.0.0.1:8041").await, "/dc1/rack1");
    assert_eq!(rack_of(&rm, "10.0.0.2:8041").await, "/dc1/rack2");
    // A host the table does not list is in Hadoop's default rack, not the
    // one it claims.
    assert_eq!(rack_of(&rm, "10.0.0.3:8041").await, "/default-rack");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_script_places_nodes_and_a_failing_or_hung_one_leaves_them_in_the_default_rack() {
    let dir = TestDir::new("topology-script");
    // Racks by the last octet of the address; one host fails, one hangs.
    let path = script(
        &dir,
        r#"case "$1" in
  *.66) echo 'inventory down' >&2; exit 1 ;;
  *.99) sleep 30 ;;
  *) echo "/rack-${1##*.}" ;;
esac"#,
    );
    let rm = Rm::with(&[
        ("net.topology.script.file.name", &path),
        ("weft.rm.topology.timeout-ms", "300"),
    ]);
    let a = register_in(&rm, "10.0.0.7:8041", Some("/r1")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(rack_of(&rm, "10.0.0.7:8041").await, "/rack-7");

    let a = register_in(&rm, "10.0.0.66:8041", Some("/r1")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(rack_of(&rm, "10.0.0.66:8041").await, "/default-rack");

    let begun = std::time::Instant::now();
    let a = register_in(&rm, "10.0.0.99:8041", None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(rack_of(&rm, "10.0.0.99:8041").await, "/default-rack");
    // The hung script was killed at its timeout, not waited for.
    assert!(
        begun.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        begun.elapsed()
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn without_a_mapping_the_declared_rack_stands() {
    let rm = Rm::new();
    let a = register_in(&rm, "10.0.0.1:8041", Some("/r7")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let a = register_in(&rm, "10.0.0.2:8041", None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(rack_of(&rm, "10.0.0.1:8041").await, "/r7");
    assert_eq!(rack_of(&rm, "10.0.0.2:8041").await, "/default-rack");
    rm.stop().await;
}
