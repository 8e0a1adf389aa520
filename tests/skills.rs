//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on the server's side, in
//! both eras: the declaration, `skills/list` and `skills/get` (entries with the front matter as
//! written and every file's digest and size), the files as `skill://` resources,
//! `resources/directory/read`, the front matter checked at start-up (each problem naming its
//! file and field), the embedded form (`skills!`), and deferred mode's search and `read_skill`.
//! Then the client's side, with this crate's client: a skill listed, loaded and its files read,
//! each verified against its entry (in process in both eras, and from the `everything` example
//! over stdio), and what it refuses.

use std::path::{Path, PathBuf};

use harness::example_binary;
use mcp_tools::client::{Client, ClientError, EraChoice, SkillResources};
use mcp_tools::deferred::DeferredTools;
use mcp_tools::testing::TestClient;
use mcp_tools::{Era, Server};
use serde_json::json;
use sha2::Digest as _;

/// A fresh folder under target/tmp (cargo's folder for tests' files, not the system's: the
/// servers read the files as they are asked for, so the folders outlive the tests), holding
/// `files` (path, contents).
fn folder(name: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-tools-skills-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    root
}

const PDF_SKILL: &str = "---\nname: pdf-processing\ndescription: Extract text from PDF files.\nlicense: MIT\nmetadata:\n  version: \"2.1\"\n---\n\n# PDF\n\nSee `references/FORMS.md`.\n";
const FORMS: &str = "# Forms\n\nFill them in.\n";
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0xff];
const REFUNDS: &str =
    "---\nname: refunds\ndescription: Process refund requests.\n---\nRefund within 30 days.\n";

fn good_folder(name: &str) -> PathBuf {
    folder(
        name,
        &[
            ("pdf-processing/SKILL.md", PDF_SKILL.as_bytes()),
            ("pdf-processing/references/FORMS.md", FORMS.as_bytes()),
            ("pdf-processing/assets/logo.png", PNG),
            ("pdf-processing/.hidden", b"never served"),
            ("acme/billing/refunds/SKILL.md", REFUNDS.as_bytes()),
            ("README.md", b"not in a skill, not served"),
        ],
    )
}

fn digest(bytes: &[u8]) -> String {
    let hash = sha2::Sha256::digest(bytes);
    format!("sha256:{}", hash.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

fn server(folder: &Path) -> Server {
    Server::builder().inventory(false).skills(folder).build().unwrap()
}

/// A client of each era.
async fn clients(server: &Server) -> Vec<TestClient> {
    vec![TestClient::connect(server).await, TestClient::connect_stateless(server)]
}

#[tokio::test]
async fn the_extension_is_declared_in_both_eras_with_directory_read_and_resources() {
    let server = server(&good_folder("declared"));
    let initialize = TestClient::connect_uninitialized(&server)
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
        )
        .await
        .unwrap();
    let discover =
        TestClient::connect_stateless(&server).request("server/discover", json!({})).await.unwrap();
    for (era, capabilities) in
        [("2025-11-25", &initialize["capabilities"]), ("2026-07-28", &discover["capabilities"])]
    {
        assert_eq!(
            capabilities["extensions"]["io.modelcontextprotocol/skills"],
            json!({"directoryRead": true}),
            "{era}: {capabilities}"
        );
        assert!(capabilities["resources"].is_object(), "{era}: {capabilities}");
    }
    // The tasks extension stays 2026-07-28's only.
    assert!(initialize["capabilities"]["extensions"].get("io.modelcontextprotocol/tasks").is_none());
    assert_eq!(discover["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"], json!({}));
}

#[tokio::test]
async fn skills_list_gives_every_skill_with_its_front_matter_as_written_and_every_file_with_its_digest() {
    let server = server(&good_folder("list"));
    for client in clients(&server).await {
        let era = client.era();
        let listed = client.request("skills/list", json!({})).await.unwrap();
        let skills = listed["skills"].as_array().unwrap();
        let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
        assert_eq!(
            uris,
            ["skill://acme/billing/refunds/SKILL.md", "skill://pdf-processing/SKILL.md"],
            "{era:?}"
        );
        assert_eq!(
            skills[1],
            json!({
                "uri": "skill://pdf-processing/SKILL.md",
                "frontmatter": {
                    "name": "pdf-processing",
                    "description": "Extract text from PDF files.",
                    "license": "MIT",
                    "metadata": {"version": "2.1"}
                },
                "resources": [
                    {"uri": "skill://pdf-processing/SKILL.md", "digest": digest(PDF_SKILL.as_bytes()), "size": PDF_SKILL.len()},
                    {"uri": "skill://pdf-processing/assets/logo.png", "digest": digest(PNG), "size": PNG.len()},
                    {"uri": "skill://pdf-processing/references/FORMS.md", "digest": digest(FORMS.as_bytes()), "size": FORMS.len()}
                ]
            }),
            "{era:?}"
        );
        assert!(listed.get("nextCursor").is_none());
        // 2026-07-28 results are complete and carry the list cache hints; 2025-11-25 ones do not.
        match era {
            Era::Stateless => {
                assert_eq!(listed["resultType"], "complete");
                assert!(listed["ttlMs"].is_u64() && listed["cacheScope"].is_string(), "{listed}");
            }
            Era::Handshake => assert!(listed.get("resultType").is_none() && listed.get("ttlMs").is_none()),
        }
        let bad_cursor = client.request("skills/list", json!({"cursor": "nope"})).await.unwrap_err();
        assert_eq!(bad_cursor.code, -32602);
    }
}

#[tokio::test]
async fn skills_get_answers_a_served_skill_and_refuses_any_other_uri() {
    let server = server(&good_folder("get"));
    for client in clients(&server).await {
        let got = client
            .request("skills/get", json!({"uri": "skill://acme/billing/refunds/SKILL.md"}))
            .await
            .unwrap();
        assert_eq!(got["skill"]["frontmatter"]["name"], "refunds");
        assert_eq!(got["skill"]["resources"].as_array().unwrap().len(), 1);
        assert!(got.get("nextCursor").is_none());
        if client.era() == Era::Stateless {
            assert!(got["ttlMs"].is_u64() && got["cacheScope"].is_string(), "{got}");
        }
        for uri in ["skill://nope/SKILL.md", "skill://pdf-processing/references/FORMS.md", ""] {
            let error = client.request("skills/get", json!({"uri": uri})).await.unwrap_err();
            assert_eq!(error.code, -32602, "{uri}: {error}");
        }
    }
}

#[tokio::test]
async fn every_file_is_a_resource_and_reads_back_the_bytes_its_digest_covers() {
    use base64::Engine as _;
    let server = server(&good_folder("read"));
    for client in clients(&server).await {
        let listed = client.request("resources/list", json!({})).await.unwrap();
        let resources = listed["resources"].as_array().unwrap();
        let skill_md = resources.iter().find(|r| r["uri"] == "skill://pdf-processing/SKILL.md").unwrap();
        assert_eq!(
            (&skill_md["name"], &skill_md["description"], &skill_md["mimeType"], &skill_md["size"]),
            (
                &json!("pdf-processing"),
                &json!("Extract text from PDF files."),
                &json!("text/markdown"),
                &json!(PDF_SKILL.len())
            )
        );
        let uris: Vec<&str> = resources.iter().filter_map(|r| r["uri"].as_str()).collect();
        assert!(!uris.iter().any(|u| u.contains("hidden") || u.contains("README")), "{uris:?}");
        let read = client
            .request("resources/read", json!({"uri": "skill://pdf-processing/SKILL.md"}))
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], PDF_SKILL);
        assert_eq!(read["contents"][0]["mimeType"], "text/markdown");
        let read = client
            .request("resources/read", json!({"uri": "skill://pdf-processing/assets/logo.png"}))
            .await
            .unwrap();
        let blob = base64::engine::general_purpose::STANDARD
            .decode(read["contents"][0]["blob"].as_str().unwrap())
            .unwrap();
        assert_eq!((blob.as_slice(), &read["contents"][0]["mimeType"]), (PNG, &json!("image/png")));
    }
}

#[tokio::test]
async fn directory_read_lists_the_files_and_folders_directly_in_a_folder() {
    let server = server(&good_folder("directory"));
    for client in clients(&server).await {
        let read = client
            .request("resources/directory/read", json!({"uri": "skill://pdf-processing"}))
            .await
            .unwrap();
        assert_eq!(
            read["resources"],
            json!([
                {"uri": "skill://pdf-processing/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown", "size": PDF_SKILL.len()},
                {"uri": "skill://pdf-processing/assets", "name": "assets", "mimeType": "inode/directory"},
                {"uri": "skill://pdf-processing/references", "name": "references", "mimeType": "inode/directory"}
            ])
        );
        // The folders above a skill are folders too.
        let acme = client.request("resources/directory/read", json!({"uri": "skill://acme"})).await.unwrap();
        assert_eq!(
            acme["resources"],
            json!([{"uri": "skill://acme/billing", "name": "billing", "mimeType": "inode/directory"}])
        );
        for uri in ["skill://pdf-processing/SKILL.md", "skill://nowhere", "skill://pdf-processing/"] {
            let error = client.request("resources/directory/read", json!({"uri": uri})).await.unwrap_err();
            assert_eq!(error.code, -32602, "{uri}");
        }
    }
}

#[tokio::test]
async fn a_skill_nested_in_another_is_listed_alone_and_among_its_encloser_s_files() {
    let nested = "---\nname: forms\ndescription: Fill PDF forms.\n---\nFill.\n";
    let root = folder(
        "nested",
        &[
            ("pdf-processing/SKILL.md", PDF_SKILL.as_bytes()),
            ("pdf-processing/forms/SKILL.md", nested.as_bytes()),
        ],
    );
    let client = TestClient::connect_stateless(&server(&root));
    let listed = client.request("skills/list", json!({})).await.unwrap();
    let files = |i: usize| -> Vec<String> {
        listed["skills"][i]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(listed["skills"][0]["uri"], "skill://pdf-processing/SKILL.md");
    assert_eq!(files(0), ["skill://pdf-processing/SKILL.md", "skill://pdf-processing/forms/SKILL.md"]);
    assert_eq!(listed["skills"][1]["uri"], "skill://pdf-processing/forms/SKILL.md");
    assert_eq!(files(1), ["skill://pdf-processing/forms/SKILL.md"]);
}

#[tokio::test]
async fn a_folder_that_is_one_skill_serves_that_skill() {
    let root = good_folder("one");
    let server = server(&root.join("pdf-processing"));
    let listed = TestClient::connect(&server).await.request("skills/list", json!({})).await.unwrap();
    assert_eq!(listed["skills"].as_array().unwrap().len(), 1);
    assert_eq!(listed["skills"][0]["uri"], "skill://pdf-processing/SKILL.md");
}

/// The problems of a server built from `files`.
fn problems(name: &str, files: &[(&str, &[u8])]) -> Vec<String> {
    let root = folder(name, files);
    match Server::builder().inventory(false).skills(&root).build() {
        Ok(_) => panic!("{name}: the server was built"),
        Err(error) => {
            let shown = root.display().to_string();
            error.problems().iter().map(|p| p.replace(&shown, "ROOT")).collect()
        }
    }
}

#[test]
fn front_matter_problems_name_the_file_and_the_field_all_at_once() {
    let problems = problems(
        "invalid",
        &[
            ("Bad_Name/SKILL.md", b"---\nname: Bad_Name\ndescription: x\n---\n"),
            (
                "other/SKILL.md",
                b"---\nname: not-other\nmetadata:\n  version: 2\n  io.modelcontextprotocol/x: y\n---\n",
            ),
            (
                "long/SKILL.md",
                format!("---\nname: long\ndescription: {}\ncompatibility: 7\n---\n", "d".repeat(1025))
                    .as_bytes(),
            ),
            ("bare/SKILL.md", b"# No front matter\n"),
            ("open/SKILL.md", b"---\nname: open\n"),
            ("broken/SKILL.md", b"---\nname: [broken\n---\n"),
        ],
    );
    let expected = [
        "ROOT/Bad_Name/SKILL.md: front matter field `name`: `Bad_Name` has `B`; a skill name has only lowercase letters, digits and hyphens",
        "ROOT/bare/SKILL.md: it does not begin with a `---` line opening its YAML front matter",
        "ROOT/long/SKILL.md: front matter field `description`: has 1025 characters; at most 1024 are allowed",
        "ROOT/long/SKILL.md: front matter field `compatibility`: must be text, not a number",
        "ROOT/open/SKILL.md: its front matter has no closing `---` line",
        "ROOT/other/SKILL.md: front matter field `name`: `not-other` is not the skill's folder name `other`; they must be equal",
        "ROOT/other/SKILL.md: front matter field `description`: missing; it is required (what the skill does and when to use it)",
        "ROOT/other/SKILL.md: front matter field `metadata`: the value of `version` must be text, not a number",
        "ROOT/other/SKILL.md: front matter field `metadata`: the key `io.modelcontextprotocol/x` is reserved for MCP extensions",
    ];
    for line in expected {
        assert!(problems.iter().any(|p| p == line), "missing {line:?} in {problems:#?}");
    }
    let broken: Vec<&String> = problems.iter().filter(|p| p.starts_with("ROOT/broken/SKILL.md: ")).collect();
    assert!(broken.len() == 1 && broken[0].contains("not valid YAML"), "{problems:#?}");
    assert_eq!(problems.len(), expected.len() + 1, "{problems:#?}");
}

#[test]
fn a_folder_without_skills_a_missing_folder_and_a_skill_over_the_limits_are_refused() {
    assert_eq!(
        problems("empty", &[("notes/README.md", b"hello")]),
        ["ROOT: no skill found; a skill is a folder with a SKILL.md"]
    );
    let missing = Server::builder().inventory(false).skills("/nonexistent/skills").build().unwrap_err();
    assert!(
        missing.problems()[0].starts_with("/nonexistent/skills: cannot be read as a folder of skills"),
        "{missing}"
    );
    let skill = b"---\nname: big\ndescription: Many files.\n---\n".to_vec();
    let mut files: Vec<(String, Vec<u8>)> = vec![("big/SKILL.md".into(), skill)];
    files.extend((0..512).map(|i| (format!("big/data/{i}.txt"), vec![b'x'])));
    let files: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
    assert_eq!(
        problems("big", &files),
        ["ROOT/big: the skill has 513 files; a skill may have at most 512 (the Skills extension's limit)"]
    );
}

#[test]
fn a_skill_file_may_not_take_the_uri_of_another_resource() {
    let root = good_folder("clash");
    let taken = mcp_tools::Resource::fixed(
        "skill://acme/billing/refunds/SKILL.md",
        "mine",
        mcp_tools::ResourceContents::text("skill://acme/billing/refunds/SKILL.md", None, "x"),
    );
    let error = Server::builder().inventory(false).resource(taken).skills(&root).build().unwrap_err();
    assert_eq!(
        error.problems(),
        ["two resources have the URI `skill://acme/billing/refunds/SKILL.md`: a skill's file and another"]
    );
}

#[tokio::test]
async fn embedded_skills_are_served_like_the_folder_they_come_from() {
    let embedded =
        Server::builder().inventory(false).skills(mcp_tools::skills!("examples/skills")).build().unwrap();
    let read = Server::builder().inventory(false).skills("examples/skills").build().unwrap();
    let (embedded, read) = (TestClient::connect_stateless(&embedded), TestClient::connect_stateless(&read));
    let listed = embedded.request("skills/list", json!({})).await.unwrap();
    assert_eq!(listed, read.request("skills/list", json!({})).await.unwrap());
    let uris: Vec<&str> =
        listed["skills"].as_array().unwrap().iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["skill://acme/billing/refunds/SKILL.md", "skill://pdf-processing/SKILL.md"]);
    let script = "skill://pdf-processing/scripts/extract.py";
    let text = embedded.request("resources/read", json!({"uri": script})).await.unwrap();
    assert_eq!(text["contents"][0]["mimeType"], "text/x-python");
    assert_eq!(text, read.request("resources/read", json!({"uri": script})).await.unwrap());
}

#[test]
fn the_front_matter_rules_are_one_file_in_both_crates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runtime = std::fs::read_to_string(root.join("mcp-tools/src/skills/format.rs")).unwrap();
    let macros = std::fs::read_to_string(root.join("mcp-tools-macros/src/skills/format.rs")).unwrap();
    assert!(
        runtime == macros,
        "mcp-tools-macros/src/skills/format.rs differs from mcp-tools/src/skills/format.rs: copy it over"
    );
}

#[tokio::test]
async fn deferred_search_finds_skills_and_read_skill_reads_them() {
    let server = Server::builder()
        .inventory(false)
        .skills(good_folder("deferred"))
        .tool(mcp_tools::Tool::new(
            "get_weather",
            "Current weather for a city.",
            json!({"type": "object"}),
            |_, _| async { Ok(mcp_tools::ToolResult::new().text("sunny")) },
        ))
        .defer_tools(DeferredTools::new())
        .build()
        .unwrap();
    for client in clients(&server).await {
        let tools = client.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert!(names.contains(&"read_skill"), "{names:?}");
        let search = tools.iter().find(|t| t["name"] == "search_tools").unwrap();
        assert!(search["description"].as_str().unwrap().contains("2 skills"), "{search}");
        let found = client.call("search_tools", json!({"query": "extract text from a pdf"})).await.unwrap();
        let skills = &found.structured().unwrap()["skills"];
        assert_eq!(
            skills,
            &json!([{"name": "pdf-processing", "uri": "skill://pdf-processing/SKILL.md", "description": "Extract text from PDF files."}])
        );
        let all = client.call("search_tools", json!({"query": ""})).await.unwrap();
        assert_eq!(all.structured().unwrap()["skills"].as_array().unwrap().len(), 2);
        let weather = client.call("search_tools", json!({"query": "weather in Paris"})).await.unwrap();
        assert!(weather.structured().unwrap().get("skills").is_none(), "{}", weather.text());
        let read =
            client.call("read_skill", json!({"uri": "skill://pdf-processing/SKILL.md"})).await.unwrap();
        assert!(!read.is_error());
        assert!(read.text().starts_with(PDF_SKILL), "{}", read.text());
        assert!(read.text().contains("- skill://pdf-processing/references/FORMS.md"), "{}", read.text());
        let forms = client
            .call("read_skill", json!({"uri": "skill://pdf-processing/references/FORMS.md"}))
            .await
            .unwrap();
        assert_eq!(forms.text(), FORMS);
        let unknown = client.call("read_skill", json!({"uri": "skill://nope/SKILL.md"})).await.unwrap();
        assert!(
            unknown.is_error() && unknown.text().contains("No skill file is served at"),
            "{}",
            unknown.text()
        );
    }
}

#[tokio::test]
async fn a_server_without_skills_declares_no_skills_and_knows_none_of_their_methods() {
    let server = Server::builder()
        .inventory(false)
        .tool(mcp_tools::Tool::new("noop", "Does nothing.", json!({"type": "object"}), |_, _| async {
            Ok(mcp_tools::ToolResult::new().text("ok"))
        }))
        .build()
        .unwrap();
    for client in clients(&server).await {
        for method in ["skills/list", "skills/get", "resources/directory/read"] {
            assert_eq!(client.request(method, json!({})).await.unwrap_err().code, -32601, "{method}");
        }
    }
    let discover =
        TestClient::connect_stateless(&server).request("server/discover", json!({})).await.unwrap();
    assert_eq!(discover["capabilities"]["extensions"], json!({"io.modelcontextprotocol/tasks": {}}));
}

// ===== The client's side =====

#[tokio::test]
async fn a_client_lists_a_skill_loads_it_and_reads_its_files_verified_in_both_eras() {
    let server = server(&good_folder("client"));
    for era in [EraChoice::Handshake, EraChoice::Auto] {
        let client = server.connect(Client::builder().era(era)).await.unwrap();
        assert!(client.serves_skills());
        let skills = client.list_skills().await.unwrap();
        let names: Vec<&str> = skills.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["refunds", "pdf-processing"], "{:?}", client.era());
        let pdf = &skills[1];
        assert_eq!(pdf.description(), "Extract text from PDF files.");
        assert_eq!(client.get_skill(&pdf.uri).await.unwrap(), *pdf);
        assert_eq!(client.load_skill(pdf).await.unwrap(), PDF_SKILL);
        let forms = client.read_skill_file(pdf, "skill://pdf-processing/references/FORMS.md").await.unwrap();
        assert_eq!(forms, FORMS.as_bytes());
        let logo = client.read_skill_file(pdf, "skill://pdf-processing/assets/logo.png").await.unwrap();
        assert_eq!(logo, PNG);
        let children = client.read_directory("skill://pdf-processing/references").await.unwrap();
        assert_eq!(children[0]["uri"], "skill://pdf-processing/references/FORMS.md");
        // What the entry does not vouch for is refused, its content not returned.
        let outside = client.read_skill_file(pdf, "skill://acme/billing/refunds/SKILL.md").await.unwrap_err();
        assert!(matches!(outside, ClientError::Unverified(_)), "{outside}");
        let mut tampered = pdf.clone();
        if let SkillResources::Files(files) = &mut tampered.resources {
            files[2].digest = format!("sha256:{}", "0".repeat(64));
            files[1].size += 1;
        }
        let digest = client.read_skill_file(&tampered, "skill://pdf-processing/references/FORMS.md").await;
        assert!(matches!(&digest, Err(ClientError::Unverified(why)) if why.contains("digest")), "{digest:?}");
        let size = client.read_skill_file(&tampered, "skill://pdf-processing/assets/logo.png").await;
        assert!(matches!(&size, Err(ClientError::Unverified(why)) if why.contains("bytes")), "{size:?}");
        let mut approved = pdf.clone();
        approved.frontmatter.insert("description".into(), json!("Something else."));
        let frontmatter = client.load_skill(&approved).await;
        assert!(
            matches!(&frontmatter, Err(ClientError::Unverified(why)) if why.contains("front matter")),
            "{frontmatter:?}"
        );
        let unknown = client.get_skill("skill://nope/SKILL.md").await.unwrap_err();
        assert_eq!(unknown.code(), Some(-32602));
    }
}

#[tokio::test]
async fn a_client_refuses_skill_methods_of_a_server_that_does_not_declare_the_extension() {
    let server = Server::builder()
        .inventory(false)
        .tool(mcp_tools::Tool::new("noop", "Does nothing.", json!({"type": "object"}), |_, _| async {
            Ok(mcp_tools::ToolResult::new().text("ok"))
        }))
        .build()
        .unwrap();
    let client = server.connect(Client::builder()).await.unwrap();
    assert!(!client.serves_skills());
    let error = client.list_skills().await.unwrap_err();
    assert!(error.to_string().contains("does not declare the Skills extension"), "{error}");
}

#[tokio::test]
async fn the_everything_example_serves_its_embedded_skills_over_stdio() {
    let command = tokio::process::Command::new(example_binary("everything"));
    let client = Client::builder().connect_stdio(command).await.unwrap();
    let skills = client.list_skills().await.unwrap();
    let refunds = skills.iter().find(|s| s.name() == "refunds").unwrap();
    assert_eq!(refunds.uri, "skill://acme/billing/refunds/SKILL.md");
    let text = client.load_skill(refunds).await.unwrap();
    assert!(text.contains("examples/email.md"), "{text}");
    let email =
        client.read_skill_file(refunds, "skill://acme/billing/refunds/examples/email.md").await.unwrap();
    assert!(String::from_utf8(email).unwrap().starts_with("Hello {name},"));
    client.close().await;
}
