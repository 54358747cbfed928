//! Router tests of `GET /jmx`, Hadoop's JMX JSON servlet: a queue's
//! `QueueMetrics` bean after submissions, a kill and an AM placed, the
//! `ClusterMetrics` bean, and the servlet's `qry` and `get` parameters
//! with its answers to malformed ones.

use super::*;

const QUEUES: &str = "Hadoop:service=ResourceManager,name=QueueMetrics,*";

/// The bean called `name` in a `/jmx` answer.
fn bean<'a>(answer: &'a Value, name: &str) -> &'a Value {
    answer["beans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no bean {name} in {answer}"))
}

/// The names of the beans in a `/jmx` answer, one per line.
fn names(answer: &Value) -> String {
    answer["beans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| format!("{}\n", b["name"].as_str().unwrap()))
        .collect()
}

#[tokio::test]
async fn queue_and_cluster_beans() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    rm.running("alice", "a", "h1:8041", 0).await;
    rm.submit("bob", "a").await;
    let killed = rm.submit("bob", "b").await;
    let k = rm.kill(&killed, "bob").await;
    assert_eq!(k.status, StatusCode::OK, "{}", k.body);

    // Unknown parameters are ignored, as the servlet ignores them.
    let a = get(r, "/jmx?foo=bar").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.headers["content-type"], "application/json; charset=utf8");
    assert_eq!(a.headers["access-control-allow-origin"], "*");
    assert_eq!(a.headers["access-control-allow-methods"], "GET");
    let all = a.json();
    let leaf = bean(
        &all,
        "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=a",
    );
    let pick = |b: &Value, keys: &[&str]| -> String {
        keys.iter()
            .map(|k| format!("{k}={}\n", b[*k]))
            .collect::<String>()
    };
    expect![[r#"
        modelerType="QueueMetrics,q0=root,q1=a"
        tag.Queue="root.a"
        AppsSubmitted=2
        AppsRunning=1
        AppsPending=1
        AppsKilled=0
        AllocatedMB=1024
        AllocatedVCores=1
        AllocatedContainers=1
        AggregateContainersAllocated=1
        AggregateOffSwitchContainersAllocated=1
        AMResourceUsageMB=1024
        AvailableMB=0
        MaxApps=2147483647
        SchedulingPolicy="fair"
        ActiveApplications=1
        ActiveUsers=1
        running_0=1
        running_60=0
        running_300=0
        running_1440=0
    "#]]
    .assert_eq(&pick(
        leaf,
        &[
            "modelerType",
            "tag.Queue",
            "AppsSubmitted",
            "AppsRunning",
            "AppsPending",
            "AppsKilled",
            "AllocatedMB",
            "AllocatedVCores",
            "AllocatedContainers",
            "AggregateContainersAllocated",
            "AggregateOffSwitchContainersAllocated",
            "AMResourceUsageMB",
            "AvailableMB",
            "MaxApps",
            "SchedulingPolicy",
            "ActiveApplications",
            "ActiveUsers",
            "running_0",
            "running_60",
            "running_300",
            "running_1440",
        ],
    ));
    let root = bean(
        &all,
        "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root",
    );
    expect![[r#"
        AppsSubmitted=3
        AppsRunning=1
        AppsPending=1
        AppsKilled=1
        AllocatedMB=1024
        AvailableMB=15360
        AvailableVCores=15
        ActiveApplications=1
        ActiveUsers=0
        running_0=1
    "#]]
    .assert_eq(&pick(
        root,
        &[
            "AppsSubmitted",
            "AppsRunning",
            "AppsPending",
            "AppsKilled",
            "AllocatedMB",
            "AvailableMB",
            "AvailableVCores",
            "ActiveApplications",
            "ActiveUsers",
            "running_0",
        ],
    ));
    let b = bean(
        &all,
        "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=b",
    );
    assert_eq!(
        (&b["AppsSubmitted"], &b["AppsKilled"]),
        (&json!(1), &json!(1)),
        "{b}"
    );
    let cluster = bean(&all, "Hadoop:service=ResourceManager,name=ClusterMetrics");
    expect![[r#"
        modelerType="ClusterMetrics"
        NumActiveNMs=2
        NumDecommissioningNMs=0
        NumDecommissionedNMs=0
        NumLostNMs=0
        NumUnhealthyNMs=0
        NumRebootedNMs=0
        NumShutdownNMs=0
        CapabilityMB=16384
        CapabilityVirtualCores=16
    "#]]
    .assert_eq(&pick(
        cluster,
        &[
            "modelerType",
            "NumActiveNMs",
            "NumDecommissioningNMs",
            "NumDecommissionedNMs",
            "NumLostNMs",
            "NumUnhealthyNMs",
            "NumRebootedNMs",
            "NumShutdownNMs",
            "CapabilityMB",
            "CapabilityVirtualCores",
        ],
    ));
    rm.stop().await;
}

#[tokio::test]
async fn qry_and_get_as_hadoops_servlet() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    rm.running("alice", "a", "h1:8041", 0).await;

    let queues = get(r, &format!("/jmx?qry={QUEUES}")).await;
    assert_eq!(queues.status, StatusCode::OK, "{}", queues.body);
    expect![[r#"
        Hadoop:service=ResourceManager,name=QueueMetrics,q0=root
        Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=a
        Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=b
        Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=default
        Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=p
    "#]]
    .assert_eq(&names(&queues.json()));
    let cluster = get(
        r,
        "/jmx?qry=Hadoop:name=ClusterMetrics,service=ResourceManager",
    )
    .await;
    expect![[r#"
        Hadoop:service=ResourceManager,name=ClusterMetrics
    "#]]
    .assert_eq(&names(&cluster.json()));
    // Nothing matches: an empty list, not an error.
    let none = get(r, "/jmx?qry=Hadoop:service=NameNode,*").await;
    assert_eq!(none.status, StatusCode::OK);
    assert_eq!(none.body, r#"{"beans":[]}"#);

    // A malformed name is a 400, as the servlet's MalformedObjectNameException.
    let bad = get(r, "/jmx?qry=Hadoop").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        bad.headers["content-type"],
        "application/json; charset=utf8"
    );
    expect![[r#"{"message":"\"Hadoop\" is not a JMX object name pattern: there is no ':' between the domain and the key properties","result":"ERROR"}"#]]
        .assert_eq(&bad.body);

    let one = get(
        r,
        "/jmx?get=Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=a::AppsRunning",
    )
    .await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.body);
    expect![[r#"{"beans":[{"AppsRunning":1,"modelerType":"QueueMetrics,q0=root,q1=a","name":"Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=a"}]}"#]]
        .assert_eq(&one.body);
    let missing = get(
        r,
        "/jmx?get=Hadoop:service=ResourceManager,name=ClusterMetrics::NoSuchThing",
    )
    .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    expect![[r#"{"beans":[{"message":"No attribute with name NoSuchThing was found.","modelerType":"ClusterMetrics","name":"Hadoop:service=ResourceManager,name=ClusterMetrics","result":"ERROR"}]}"#]]
        .assert_eq(&missing.body);
    for get_param in ["Hadoop:*", "Hadoop:*::", "a::b::c"] {
        let a = get(r, &format!("/jmx?get={get_param}")).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{get_param}");
        assert_eq!(
            a.body, r#"{"message":"query format is not as expected.","result":"ERROR"}"#,
            "{get_param}"
        );
    }
    rm.stop().await;
}
