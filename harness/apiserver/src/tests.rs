use super::*;

fn get_json(server: &TestApiServer, path: &str) -> (u16, Value) {
    let (status, body) = client::get(&format!("{}{path}", server.url())).expect("the server answers");
    let value = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {}", String::from_utf8_lossy(&body)));
    (status, value)
}

fn names(list: &Value) -> Vec<&str> {
    list["items"].as_array().expect("a list").iter().map(|o| o["metadata"]["name"].as_str().expect("a name")).collect()
}

fn node(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
}

fn nodes() -> Vec<Value> {
    vec![
        node("n1", json!({"zone": "a", "rack": "r1"})),
        node("n2", json!({"zone": "a", "rack": "r2"})),
        node("n3", json!({"zone": "b"})),
        node("n4", json!({})),
    ]
}

fn pod_group(api_version: &str, name: &str, namespace: &str) -> Value {
    json!({"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": name, "namespace": namespace}, "spec": {}})
}

#[test]
fn discovery_lists_groups_versions_and_resources() {
    let served: BTreeSet<String> =
        ["scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"].iter().map(|s| s.to_string()).collect();
    let advertised = vec![("kubeflow.org/v1".to_string(), "PyTorchJob".to_string())];
    let server =
        TestApiServer::start_with(vec![pod_group("scheduling.k8s.io/v1beta1", "pg", "ml")], Some(served), advertised)
            .unwrap();
    let (status, version) = get_json(&server, "/version");
    assert_eq!((status, version["gitVersion"].as_str()), (200, Some("v1.37.0")));
    let (_, api) = get_json(&server, "/api");
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"], json!(["v1"]));
    let (_, core) = get_json(&server, "/api/v1");
    assert_eq!(core["kind"], "APIResourceList");
    assert_eq!(core["groupVersion"], "v1");
    let node = core["resources"].as_array().unwrap().iter().find(|r| r["kind"] == "Node").expect("Node listed");
    assert_eq!(node["name"], "nodes");
    assert_eq!(node["singularName"], "node");
    assert_eq!(node["namespaced"], false);
    assert_eq!(node["verbs"], json!(["get", "list", "watch"]));
    for kind in ["Namespace", "Pod"] {
        assert!(core["resources"].as_array().unwrap().iter().any(|r| r["kind"] == kind), "{kind} listed");
    }
    let (_, groups) = get_json(&server, "/apis");
    assert_eq!(groups["kind"], "APIGroupList");
    let scheduling = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "scheduling.k8s.io")
        .expect("scheduling group");
    assert_eq!(scheduling["preferredVersion"]["version"], "v1beta1");
    assert_eq!(scheduling["versions"].as_array().unwrap().len(), 2);
    let (_, group) = get_json(&server, "/apis/scheduling.k8s.io");
    assert_eq!((group["kind"].as_str(), group["name"].as_str()), (Some("APIGroup"), Some("scheduling.k8s.io")));
    for version in ["v1beta1", "v1alpha3"] {
        let (status, list) = get_json(&server, &format!("/apis/scheduling.k8s.io/{version}"));
        assert_eq!(status, 200);
        let pg = &list["resources"][0];
        assert_eq!(
            (pg["kind"].as_str(), pg["name"].as_str(), pg["namespaced"].as_bool()),
            (Some("PodGroup"), Some("podgroups"), Some(true))
        );
    }
    let (status, kubeflow) = get_json(&server, "/apis/kubeflow.org/v1");
    assert_eq!(status, 200);
    assert_eq!(kubeflow["resources"][0]["name"], "pytorchjobs");
    assert_eq!(server.counts().discovery, 8);
}

#[test]
fn unserved_versions_answer_404() {
    let served: BTreeSet<String> = ["scheduling.k8s.io/v1beta1".to_string()].into();
    let server = TestApiServer::start(
        vec![pod_group("scheduling.k8s.io/v1alpha2", "old", "ml"), pod_group("scheduling.k8s.io/v1beta1", "new", "ml")],
        Some(served),
    )
    .unwrap();
    for path in [
        "/apis/scheduling.k8s.io/v1alpha2",
        "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups/old",
        "/apis/scheduling.k8s.io/v1alpha3",
        "/apis/nothing.example.com/v1",
    ] {
        let (status, body) = get_json(&server, path);
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["kind"], "Status");
        assert_eq!(body["status"], "Failure");
        assert_eq!(body["reason"], "NotFound");
        assert_eq!(body["code"], 404);
        assert_eq!(body["message"], "the server could not find the requested resource");
    }
    let (status, _) = get_json(&server, "/apis/scheduling.k8s.io/v1beta1/namespaces/ml/podgroups/new");
    assert_eq!(status, 200);
    // A served version with no objects of a kind: the kind is not there.
    let (status, _) = get_json(&server, "/apis/scheduling.k8s.io/v1beta1/workloads");
    assert_eq!(status, 404);
}

#[test]
fn get_finds_objects_and_words_404_like_the_apiserver() {
    let server =
        TestApiServer::start(vec![node("n1", json!({})), pod_group("scheduling.k8s.io/v1alpha2", "pg", "ml")], None)
            .unwrap();
    let (status, n1) = get_json(&server, "/api/v1/nodes/n1");
    assert_eq!(status, 200);
    assert_eq!((n1["apiVersion"].as_str(), n1["kind"].as_str()), (Some("v1"), Some("Node")));
    assert!(n1["metadata"]["uid"].is_string() && n1["metadata"]["resourceVersion"].is_string());
    assert!(n1["metadata"].get("namespace").is_none());
    let (status, missing) = get_json(&server, "/api/v1/nodes/n9");
    assert_eq!(status, 404);
    assert_eq!(missing["message"], "nodes \"n9\" not found");
    assert_eq!(missing["reason"], "NotFound");
    assert_eq!(missing["details"], json!({"name": "n9", "kind": "nodes"}));
    let (status, pg) = get_json(&server, "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups/pg");
    assert_eq!((status, pg["metadata"]["namespace"].as_str()), (200, Some("ml")));
    let (status, missing) = get_json(&server, "/apis/scheduling.k8s.io/v1alpha2/namespaces/other/podgroups/pg");
    assert_eq!(status, 404);
    assert_eq!(missing["message"], "podgroups.scheduling.k8s.io \"pg\" not found");
    assert_eq!(missing["details"], json!({"name": "pg", "group": "scheduling.k8s.io", "kind": "podgroups"}));
    // The core group's namespace objects sit at /api/v1/namespaces/<name>.
    let (status, ns) = get_json(&server, "/api/v1/namespaces/ml");
    assert_eq!((status, ns["message"].as_str()), (404, Some("namespaces \"ml\" not found")));
    assert_eq!(server.counts().get, 5);
}

#[test]
fn lists_filter_by_label_selector() {
    let server = TestApiServer::start(nodes(), None).unwrap();
    let cases = [
        ("", vec!["n1", "n2", "n3", "n4"]),
        ("rack", vec!["n1", "n2"]),
        ("!rack", vec!["n3", "n4"]),
        ("zone%3Da", vec!["n1", "n2"]),
        ("zone%3D%3Db", vec!["n3"]),
        ("zone!%3Da", vec!["n3", "n4"]),
        ("rack+in+(r1%2Cr3)", vec!["n1"]),
        ("rack%20notin%20%28r1%29", vec!["n2", "n3", "n4"]),
        ("zone%3Da,rack%3Dr2", vec!["n2"]),
        ("zone,!rack", vec!["n3"]),
    ];
    for (selector, expected) in cases {
        let (status, list) = get_json(&server, &format!("/api/v1/nodes?labelSelector={selector}"));
        assert_eq!(status, 200, "{selector}");
        assert_eq!(names(&list), expected, "{selector}");
        assert_eq!((list["kind"].as_str(), list["apiVersion"].as_str()), (Some("NodeList"), Some("v1")));
        assert_eq!(list["metadata"]["resourceVersion"], server.resource_version().to_string());
        assert!(list["items"].as_array().unwrap().iter().all(|i| i["kind"] == "Node" && i["apiVersion"] == "v1"));
    }
    for bad in ["zone%3D%3D%3Da", "!", "a,", "rack+in+()", "rack+in+r1", "-bad-", "zone%3Da%20b", "rack+in+(r1"] {
        let (status, body) = get_json(&server, &format!("/api/v1/nodes?labelSelector={bad}"));
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!((body["kind"].as_str(), body["reason"].as_str()), (Some("Status"), Some("BadRequest")), "{bad}");
    }
}

#[test]
fn lists_filter_by_field_selector_and_namespace() {
    let objects = vec![
        pod_group("scheduling.k8s.io/v1alpha2", "a", "ml"),
        pod_group("scheduling.k8s.io/v1alpha2", "b", "ml"),
        pod_group("scheduling.k8s.io/v1alpha2", "a", "web"),
    ];
    let server = TestApiServer::start(objects, None).unwrap();
    let base = "/apis/scheduling.k8s.io/v1alpha2";
    let (_, all) = get_json(&server, &format!("{base}/podgroups"));
    assert_eq!(names(&all), ["a", "b", "a"]);
    let (_, ml) = get_json(&server, &format!("{base}/namespaces/ml/podgroups"));
    assert_eq!(names(&ml), ["a", "b"]);
    let (_, named) = get_json(&server, &format!("{base}/podgroups?fieldSelector=metadata.name%3Da"));
    assert_eq!(named["items"].as_array().unwrap().len(), 2);
    let (_, not_ml) = get_json(&server, &format!("{base}/podgroups?fieldSelector=metadata.namespace!%3Dml"));
    assert_eq!(not_ml["items"][0]["metadata"]["namespace"], "web");
    let (_, both) =
        get_json(&server, &format!("{base}/podgroups?fieldSelector=metadata.namespace%3D%3Dml,metadata.name%3Db"));
    assert_eq!(names(&both), ["b"]);
    let (status, bad) = get_json(&server, &format!("{base}/podgroups?fieldSelector=spec.foo%3D1"));
    assert_eq!((status, bad["message"].as_str()), (400, Some("field label not supported: spec.foo")));
    assert_eq!(server.counts().list, 6);
}

#[test]
fn lists_paginate_with_limit_and_continue() {
    let server = TestApiServer::start((0..7).map(|i| node(&format!("n{i}"), json!({}))).collect(), None).unwrap();
    let mut seen = Vec::new();
    let mut path = "/api/v1/nodes?limit=3".to_string();
    let mut pages = 0;
    loop {
        let (status, page) = get_json(&server, &path);
        assert_eq!(status, 200);
        pages += 1;
        seen.extend(names(&page).into_iter().map(str::to_string));
        match page["metadata"]["continue"].as_str() {
            Some(token) => {
                assert_eq!(page["metadata"]["remainingItemCount"], 7 - seen.len());
                let token: String = token
                    .bytes()
                    .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
                    .collect();
                path = format!(
                    "/api/v1/nodes?limit=3&continue={token}&resourceVersion=0&resourceVersionMatch=NotOlderThan"
                );
            }
            None => {
                assert!(page["metadata"].get("remainingItemCount").is_none());
                break;
            }
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, ["n0", "n1", "n2", "n3", "n4", "n5", "n6"]);
    let (status, _) = get_json(&server, "/api/v1/nodes?limit=3&continue=bm90IGEgdG9rZW4");
    assert_eq!(status, 400);
    let (status, _) = get_json(&server, "/api/v1/nodes?limit=x");
    assert_eq!(status, 400);
}

#[test]
fn v1beta1_and_v1alpha3_serve_the_same_objects() {
    let objects = vec![
        pod_group("scheduling.k8s.io/v1alpha3", "made-as-alpha", "ml"),
        pod_group("scheduling.k8s.io/v1beta1", "made-as-beta", "ml"),
    ];
    let server = TestApiServer::start(objects, None).unwrap();
    for version in ["v1beta1", "v1alpha3"] {
        let api_version = format!("scheduling.k8s.io/{version}");
        let (_, list) = get_json(&server, &format!("/apis/{api_version}/namespaces/ml/podgroups"));
        assert_eq!(names(&list), ["made-as-alpha", "made-as-beta"], "{version}");
        assert_eq!(list["apiVersion"], api_version);
        assert!(list["items"].as_array().unwrap().iter().all(|i| i["apiVersion"] == api_version));
        for name in ["made-as-alpha", "made-as-beta"] {
            let (status, object) = get_json(&server, &format!("/apis/{api_version}/namespaces/ml/podgroups/{name}"));
            assert_eq!((status, object["apiVersion"].as_str()), (200, Some(api_version.as_str())));
        }
    }
    // v1alpha2 is another API: its objects are not these.
    let (status, _) = get_json(&server, "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups");
    assert_eq!(status, 404);
}

/// Sends `requests` on one connection and reads `answers` responses (Content-Length
/// bodies only).
fn keep_alive_exchange(server: &TestApiServer, paths: &[&str]) -> Vec<(u16, Value)> {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answers = Vec::new();
    let mut buf = Vec::new();
    for path in paths {
        write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n").unwrap();
        let head_end = loop {
            if let Some(end) = find(&buf, b"\r\n\r\n") {
                break end;
            }
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).unwrap();
            assert!(n > 0, "connection closed early");
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
        let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
        let length: usize = head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).unwrap().parse().unwrap();
        while buf.len() < head_end + 4 + length {
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).unwrap();
            assert!(n > 0, "connection closed early");
            buf.extend_from_slice(&chunk[..n]);
        }
        let body: Vec<u8> = buf.drain(..head_end + 4 + length).skip(head_end + 4).collect();
        answers.push((status, serde_json::from_slice(&body).unwrap()));
    }
    answers
}

#[test]
fn connections_are_kept_alive() {
    let server = TestApiServer::start(nodes(), None).unwrap();
    let answers =
        keep_alive_exchange(&server, &["/api/v1", "/api/v1/nodes?limit=2", "/api/v1/nodes/n3", "/api/v1/nodes/zz"]);
    let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
    assert_eq!(statuses, [200, 200, 200, 404]);
    assert_eq!(names(&answers[1].1), ["n1", "n2"]);
}

#[test]
fn watches_stream_initial_events_and_end_at_the_timeout() {
    let server = TestApiServer::start(nodes(), None).unwrap();
    let started = Instant::now();
    let url =
        format!("{}/api/v1/nodes?watch=true&timeoutSeconds=1&allowWatchBookmarks=true&resourceVersion=5", server.url());
    let (status, body) = client::get(&url).unwrap();
    assert_eq!((status, body.as_slice()), (200, &b""[..]));
    assert!(started.elapsed() < Duration::from_secs(5));
    let url = format!(
        "{}/api/v1/nodes?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1&labelSelector=rack",
        server.url()
    );
    let (status, body) = client::get(&url).unwrap();
    assert_eq!(status, 200);
    let events: Vec<Value> =
        String::from_utf8(body).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.len(), 3);
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["metadata"]["name"], "n1");
    assert_eq!(events[1]["object"]["apiVersion"], "v1");
    assert_eq!(events[2]["type"], "BOOKMARK");
    assert_eq!(events[2]["object"]["kind"], "Node");
    assert_eq!(events[2]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
    assert_eq!(server.counts().watch, 2);
}

#[test]
fn a_dropped_server_ends_its_watches() {
    let server = TestApiServer::start(nodes(), None).unwrap();
    let url = format!("{}/api/v1/nodes?watch=true&timeoutSeconds=120", server.url());
    let watcher = thread::spawn(move || client::get(&url));
    while server.counts().watch == 0 {
        thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    drop(server);
    let _ = watcher.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

#[test]
fn bad_requests_get_4xx_not_panics() {
    let server = TestApiServer::start(nodes(), None).unwrap();
    let (status, body) = client::request(
        "POST",
        &format!("{}/api/v1/nodes", server.url()),
        Some("application/json"),
        b"{}",
        Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(status, 405, "{}", String::from_utf8_lossy(&body));
    for raw in [
        "GARBAGE\r\n\r\n",
        "GET /api/v1/nodes?labelSelector=%zz HTTP/1.1\r\n\r\n",
        "GET /%ff HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nbroken header\r\n\r\n",
    ] {
        let mut stream = TcpStream::connect(server.addr()).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.write_all(raw.as_bytes()).unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).unwrap();
        let (status, _) = client::parse_response(&answer).unwrap();
        assert_eq!(status, 400, "{raw:?}");
    }
    let (status, _) = client::get(&format!("{}/api/v1/nodes?watch=maybe", server.url())).unwrap();
    assert_eq!(status, 400);
    let (status, _) = client::get(&format!("{}/api/v1/pods/x", server.url())).unwrap();
    assert_eq!(status, 404, "a namespaced get without a namespace is not routed");
    let (status, _) = client::get(&format!("{}/api/v1/namespaces/ml/nodes", server.url())).unwrap();
    assert_eq!(status, 404, "cluster-scoped resources have no namespaced path");
}

#[test]
fn kubeconfig_points_at_the_server() {
    let server = TestApiServer::start(Vec::new(), None).unwrap();
    let config: Value = serde_norway::from_str(&server.kubeconfig()).unwrap();
    assert_eq!(config["clusters"][0]["cluster"]["server"], server.url());
    assert_eq!(config["current-context"], "test-apiserver");
    assert_eq!(config["contexts"][0]["context"]["cluster"], "test-apiserver");
}

#[test]
fn realistic_nodes_look_like_cloud_nodes() {
    let node = realistic_node(85);
    let size = node.to_string().len();
    assert!((3_000..=5_500).contains(&size), "{size} bytes");
    assert_eq!(node["metadata"]["name"], "node-85");
    assert_eq!(node["metadata"]["labels"].as_object().unwrap().len(), 7);
    assert_eq!(node["metadata"]["labels"]["topology.example.com/rack"], "rack-2");
    assert_eq!(node["status"]["conditions"].as_array().unwrap().len(), 5);
    assert_eq!(node["status"]["images"].as_array().unwrap().len(), 12);
    assert_ne!(realistic_node(1)["metadata"]["uid"], node["metadata"]["uid"]);
}

#[test]
fn bad_objects_are_refused_at_start() {
    assert!(TestApiServer::start(vec![json!(1)], None).is_err());
    assert!(TestApiServer::start(vec![json!({"kind": "Node", "metadata": {"name": "x"}})], None).is_err());
    assert!(TestApiServer::start(vec![node("x", json!({})), node("x", json!({}))], None).is_err());
}
