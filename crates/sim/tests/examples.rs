//! The example scenarios in `examples/sim/` load, and the small ones run to
//! completion; the command line runs one and writes its report and charts.

use std::path::{Path, PathBuf};

use weft_sim::{DirSources, Scenario, SimOptions, Sources, simulate};

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sim")
}

/// Reads files next to the examples; SWIM traces (not in the repository)
/// are replaced by a small synthesized one.
struct Examples {
    dir: DirSources,
}

impl Sources for Examples {
    fn read(&self, path: &str) -> Result<String, String> {
        if path.ends_with(".tsv") {
            let mut rng = weft_sim::rng::SimRng::new(1);
            return Ok(weft_sim::import::swim::synthesize(
                &mut rng,
                50,
                weft_model::Duration::from_secs(3600),
            ));
        }
        self.dir.read(path)
    }
}

fn load(name: &str) -> Scenario {
    let dir = examples_dir();
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    Scenario::load(
        &text,
        &Examples {
            dir: DirSources { base: dir },
        },
        None,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_example_loads() {
    let mut names: Vec<String> = std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "rolling-drain.toml",
            "sls-replay.toml",
            "swim-day.toml",
            "two-teams.toml"
        ]
    );
    for name in &names {
        let s = load(name);
        assert!(!s.apps.is_empty(), "{name} has apps");
        assert!(s.warnings.is_empty(), "{name}: {:?}", s.warnings);
    }
    assert_eq!(load("swim-day.toml").nodes.len(), 1000);
}

#[test]
fn the_small_examples_run_to_completion() {
    let options = SimOptions {
        check_every: 16,
        ..SimOptions::default()
    };
    let sls = simulate(&load("sls-replay.toml"), options).unwrap();
    assert_eq!(sls.apps.len(), 4);
    assert!(sls.apps.iter().all(|a| a.outcome.name() == "finished"));
    assert_eq!(sls.apps[0].name, "sls-job_1");
    let teams = simulate(&load("two-teams.toml"), options).unwrap();
    assert!(teams.stalled.is_none());
    assert!(
        teams.apps.iter().any(|a| a.lost > 0),
        "the lost rack cost tasks"
    );
    let science = teams.queue("root.science").unwrap();
    assert!(science.usage.iter().any(|u| u.memory_mb() > 0));
    // The drained rack's timeout cost tasks, which ran again elsewhere.
    let drain = simulate(&load("rolling-drain.toml"), options).unwrap();
    assert!(drain.stalled.is_none());
    assert!(drain.apps.iter().all(|a| a.outcome.name() == "finished"));
    assert!(
        drain.apps.iter().any(|a| a.lost > 0),
        "the drain's timeout cost tasks"
    );
}

#[test]
fn the_command_line_writes_a_report_and_charts() {
    let out = std::env::temp_dir().join(format!("weft-sim-cli-test-{}", std::process::id()));
    let scenario = examples_dir().join("sls-replay.toml");
    weft_sim::main_with_args([
        "weft-sim".into(),
        "run".into(),
        scenario.into_os_string(),
        "--out".into(),
        out.clone().into_os_string(),
        "--quiet".into(),
    ])
    .unwrap();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["scenario"], "sls-replay");
    assert_eq!(report["summary"]["apps"]["finished"], 4);
    for chart in ["queues.svg", "locality.svg", "response-times.svg"] {
        let svg = std::fs::read_to_string(out.join(chart)).unwrap();
        assert!(svg.starts_with("<svg"), "{chart}");
    }
    std::fs::remove_dir_all(&out).unwrap();
    let err =
        weft_sim::main_with_args(["weft-sim", "experiment", "nonsense", "--reduced"]).unwrap_err();
    assert!(err.to_string().contains("unknown experiment"), "{err}");
}
