//! Router tests of `/conf` (the layered site files in Hadoop's XML and
//! JSON, each property's source and finality, redaction, one property by
//! name, and the admin-only mode) and `/isActive`.

use super::*;

/// A configuration directory whose three site files each set something:
/// a secret and a plain value in core-site.xml, a final value in
/// yarn-site.xml that weft-site.xml then tries to change.
fn layered(name: &str) -> TestDir {
    let dir = TestDir::conf(name);
    dir.write(
        "core-site.xml",
        &weft_test_support::site_xml(&[
            ("fs.s3a.secret.key", "AKIA-very-secret"),
            ("fs.defaultFS", "hdfs://nn:8020"),
        ]),
    );
    dir.write(
        "yarn-site.xml",
        "<configuration>
  <property><name>yarn.resourcemanager.am.max-attempts</name><value>4</value><final>true</final></property>
  <property><name>yarn.log.dir</name><value>${fs.defaultFS}/logs &amp; more</value></property>
</configuration>",
    );
    dir.write(
        crate::config::SITE_FILE_NAME,
        &testing::site(&[("yarn.resourcemanager.am.max-attempts", "9")]),
    );
    dir
}

async fn get_with(rm: &Rm, uri: &str, headers: &[(&str, &str)]) -> Answer {
    call(&rm.router, Method::GET, uri, None, "", headers).await
}

/// The `<property>` line of `name` in an XML answer.
fn xml_line<'a>(body: &'a str, name: &str) -> &'a str {
    body.lines()
        .find(|l| l.starts_with(&format!("<property><name>{name}</name>")))
        .unwrap_or_else(|| panic!("{name} not listed in {body}"))
}

#[tokio::test(start_paused = true)]
async fn conf_lists_every_layer_in_hadoops_xml_by_default() {
    let dir = layered("conf-xml");
    let rm = dir.start();
    let a = get(&rm.router, "/conf").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.headers["content-type"], "text/xml; charset=utf-8");
    assert!(
        a.body.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?><configuration>\n"
        ),
        "{}",
        a.body
    );
    assert!(a.body.ends_with("</configuration>\n"), "{}", a.body);
    // One of each layer, with its file; the value as written (Hadoop's XML
    // does not substitute), escaped; the secret redacted.
    expect![[r#"<property><name>fs.defaultFS</name><value>hdfs://nn:8020</value><final>false</final><source>core-site.xml</source></property>"#]]
        .assert_eq(xml_line(&a.body, "fs.defaultFS"));
    expect![[r#"<property><name>fs.s3a.secret.key</name><value>&lt;redacted&gt;</value><final>false</final><source>core-site.xml</source></property>"#]]
        .assert_eq(xml_line(&a.body, "fs.s3a.secret.key"));
    expect![[r#"<property><name>yarn.log.dir</name><value>${fs.defaultFS}/logs &amp; more</value><final>false</final><source>yarn-site.xml</source></property>"#]]
        .assert_eq(xml_line(&a.body, "yarn.log.dir"));
    // Final in yarn-site.xml, so weft-site.xml's 9 did not take.
    expect![[r#"<property><name>yarn.resourcemanager.am.max-attempts</name><value>4</value><final>true</final><source>yarn-site.xml</source></property>"#]]
        .assert_eq(xml_line(&a.body, "yarn.resourcemanager.am.max-attempts"));
    expect![[r#"<property><name>yarn.admin.acl</name><value>yarn</value><final>false</final><source>weft-site.xml</source></property>"#]]
        .assert_eq(xml_line(&a.body, "yarn.admin.acl"));
    assert!(!a.body.contains("AKIA"), "{}", a.body);
    // What no file sets, with the value Weft takes.
    expect![[r#"<property><name>yarn.scheduler.fair.preemption</name><value>false</value><final>false</final><source>built-in default</source></property>"#]]
        .assert_eq(xml_line(&a.body, "yarn.scheduler.fair.preemption"));
    // Ordered by name, one line each: the files' 11 and every default
    // they leave unset.
    let lines: Vec<&str> = a
        .body
        .lines()
        .filter(|l| l.starts_with("<property><name>"))
        .collect();
    let names: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("<property><name>"))
        .filter_map(|l| l.split_once("</name>").map(|(n, _)| n))
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    let from_files = lines
        .iter()
        .filter(|l| !l.ends_with("<source>built-in default</source></property>"))
        .count();
    assert_eq!(from_files, 11, "{names:?}");
    let defaults = crate::config::listing::DEFAULTS;
    let files_set_of_the_defaults = lines
        .iter()
        .zip(&names)
        .filter(|(l, n)| {
            !l.ends_with("<source>built-in default</source></property>")
                && defaults.iter().any(|(d, _)| d == *n)
        })
        .count();
    assert_eq!(
        names.len(),
        from_files + defaults.len() - files_set_of_the_defaults
    );
}

#[tokio::test(start_paused = true)]
async fn conf_answers_hadoops_json_to_an_accept_header_or_format() {
    let dir = layered("conf-json");
    let rm = dir.start();
    for (uri, headers) in [
        ("/conf", &[("accept", "application/json")][..]),
        // Hadoop 3 looks for "json" anywhere in Accept.
        (
            "/conf",
            &[("accept", "text/html, application/json;q=0.5")][..],
        ),
        // Hadoop 2's parameter.
        ("/conf?format=json", &[][..]),
        ("/conf?format=json", &[("accept", "application/xml")][..]),
    ] {
        let a = get_with(&rm, uri, headers).await;
        assert_eq!(a.status, StatusCode::OK, "{uri} {headers:?}: {}", a.body);
        assert_eq!(a.headers["content-type"], "application/json; charset=utf-8");
        let v = a.json();
        let props = v["properties"].as_array().unwrap();
        let from_files = props
            .iter()
            .filter(|p| p["resource"] != "built-in default")
            .count();
        assert_eq!(from_files, 11);
        let find = |key: &str| {
            props
                .iter()
                .find(|p| p["key"] == key)
                .unwrap_or_else(|| panic!("{key} not in {v}"))
                .clone()
        };
        // JSON shows the value after substitution, as Hadoop's `get` does.
        assert_eq!(
            find("yarn.log.dir"),
            json!({"key": "yarn.log.dir", "value": "hdfs://nn:8020/logs & more", "isFinal": false, "resource": "yarn-site.xml"})
        );
        assert_eq!(
            find("yarn.resourcemanager.am.max-attempts"),
            json!({"key": "yarn.resourcemanager.am.max-attempts", "value": "4", "isFinal": true, "resource": "yarn-site.xml"})
        );
        assert_eq!(find("fs.s3a.secret.key")["value"], "<redacted>");
        assert_eq!(find("weft.rm.view-refresh-ms")["resource"], "weft-site.xml");
        assert_eq!(
            find("weft.rm.command-queue"),
            json!({"key": "weft.rm.command-queue", "value": "65536", "isFinal": false, "resource": "built-in default"})
        );
    }
    // format= wins over Accept, as the more explicit of the two.
    let a = get_with(&rm, "/conf?format=xml", &[("accept", "application/json")]).await;
    assert_eq!(a.headers["content-type"], "text/xml; charset=utf-8");
}

#[tokio::test(start_paused = true)]
async fn conf_answers_one_property_by_name() {
    let dir = layered("conf-name");
    let rm = dir.start();
    let a = get(
        &rm.router,
        "/conf?name=yarn.resourcemanager.am.max-attempts",
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    expect![[r#"
        <?xml version="1.0" encoding="UTF-8" standalone="no"?><configuration>
        <property><name>yarn.resourcemanager.am.max-attempts</name><value>4</value><final>true</final><source>yarn-site.xml</source></property>
        </configuration>
    "#]]
    .assert_eq(&a.body);
    let a = get(&rm.router, "/conf?name=fs.s3a.secret.key&format=json").await;
    expect![[r#"{"property":{"key":"fs.s3a.secret.key","value":"<redacted>","isFinal":false,"resource":"core-site.xml"}}"#]]
        .assert_eq(&a.body);
    // A default by name.
    let a = get(&rm.router, "/conf?name=weft.rm.event-log.file&format=json").await;
    expect![[r#"{"property":{"key":"weft.rm.event-log.file","value":"","isFinal":false,"resource":"built-in default"}}"#]]
        .assert_eq(&a.body);
    // An empty name is no name, as in Hadoop: everything.
    let all = get(&rm.router, "/conf?format=json").await;
    let a = get(&rm.router, "/conf?name=&format=json").await;
    assert_eq!(a.body, all.body);
}

#[tokio::test(start_paused = true)]
async fn conf_refuses_an_unknown_name_and_format() {
    let rm = Rm::new();
    // Hadoop's 404 and message; the body in the REST API's error format.
    let a = get(&rm.router, "/conf?name=no.such.property").await;
    expect![[r#"404 NotFoundException: Property no.such.property not found"#]]
        .assert_eq(&a.error());
    let a = get(&rm.router, "/conf?format=yaml").await;
    expect![[r#"400 BadRequestException: Bad format: yaml (format is xml or json)"#]]
        .assert_eq(&a.error());
}

#[tokio::test(start_paused = true)]
async fn conf_of_the_built_in_configuration_names_its_file() {
    let rm = Rm::new();
    let a = get(&rm.router, "/conf?format=json").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    let props = v["properties"].as_array().unwrap();
    assert!(
        props.iter().any(|p| p["resource"] == "weft-site.xml"),
        "{v}"
    );
    assert!(
        props
            .iter()
            .all(|p| p["resource"] == "weft-site.xml" || p["resource"] == "built-in default"),
        "{v}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_sensitive_keys_property_replaces_hadoops_patterns() {
    let rm = Rm::with(&[
        ("hadoop.security.sensitive-config-keys", "acl$"),
        ("my.password", "hunter2"),
    ]);
    let a = get(&rm.router, "/conf?format=json").await;
    let v = a.json();
    let value = |key: &str| {
        v["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["key"] == key)
            .map(|p| p["value"].clone())
    };
    assert_eq!(value("yarn.admin.acl"), Some(json!("<redacted>")));
    assert_eq!(value("my.password"), Some(json!("hunter2")));
    assert_eq!(
        value("hadoop.security.sensitive-config-keys"),
        Some(json!("acl$"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_sensitive_keys_pattern_that_does_not_compile_stops_the_start() {
    let dir = TestDir::conf("conf-bad-pattern");
    dir.write(
        "core-site.xml",
        &weft_test_support::site_xml(&[("hadoop.security.sensitive-config-keys", "secret$,[oops")]),
    );
    let e = crate::config::RmConfig::load(Some(&dir.0)).unwrap_err();
    let text = dir.hide(&e.to_string());
    expect![[r#"<dir>/core-site.xml: line 2, column 61: property hadoop.security.sensitive-config-keys: "[oops" is not a regular expression: unclosed character class"#]]
        .assert_eq(&text);
}

#[tokio::test(start_paused = true)]
async fn conf_and_jmx_are_for_administrators_when_instrumentation_requires_admin() {
    let rm = Rm::with(&[("hadoop.security.instrumentation.requires.admin", "true")]);
    let a = get(&rm.router, "/conf").await;
    expect![[r#"401 AuthorizationException: Unable to obtain user name, user not authenticated: add ?user.name=<user> to read the configuration (hadoop.security.instrumentation.requires.admin is true)"#]]
        .assert_eq(&a.error());
    let a = get(&rm.router, "/conf?user.name=bob").await;
    expect![[r#"403 ForbiddenException: user bob is not a cluster administrator (yarn.admin.acl) and may not read the configuration (hadoop.security.instrumentation.requires.admin is true)"#]]
        .assert_eq(&a.error());
    let a = get(&rm.router, "/conf?user.name=yarn&name=yarn.admin.acl").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(a.body.contains("<value>yarn</value>"), "{}", a.body);
    // `/jmx` as Hadoop's JMX servlet: the same check, the same answers.
    let a = get(&rm.router, "/jmx").await;
    expect![[r#"401 AuthorizationException: Unable to obtain user name, user not authenticated: add ?user.name=<user> to read /jmx (hadoop.security.instrumentation.requires.admin is true)"#]]
        .assert_eq(&a.error());
    let a = get(&rm.router, "/jmx?user.name=bob").await;
    expect![[r#"403 ForbiddenException: user bob is not a cluster administrator (yarn.admin.acl) and may not read /jmx (hadoop.security.instrumentation.requires.admin is true)"#]]
        .assert_eq(&a.error());
    let a = get(&rm.router, "/jmx?user.name=yarn").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(a.body.contains("QueueMetrics"), "{}", a.body);
    // Prometheus scrapes stay open, as Hadoop's `/prom` does.
    assert_eq!(get(&rm.router, "/metrics").await.status, StatusCode::OK);
    // Without the property anyone reads them, named or not.
    let rm = Rm::new();
    for path in ["/conf", "/conf?user.name=bob", "/jmx", "/jmx?user.name=bob"] {
        assert_eq!(get(&rm.router, path).await.status, StatusCode::OK, "{path}");
    }
}

#[tokio::test(start_paused = true)]
async fn is_active_answers_as_hadoops_active_rm() {
    let rm = Rm::new();
    let a = get(&rm.router, "/isActive").await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.body, "I am Active!");
    assert_eq!(a.headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(a.headers["connection"], "close");
    let a = call(&rm.router, Method::POST, "/isActive", None, "", &[]).await;
    assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED);
}
