//! Simulation speed: a 24-hour SWIM-like day on 1,000 nodes (synthesized
//! from a fixed seed, since the project ships no traces), and the real
//! Facebook 2009 SWIM sample when `WEFT_SWIM_TRACE` names it. Prints events
//! per second and virtual time over wall time; `docs/performance.md`
//! records the results. Run with `cargo bench -p weft-sim`.

use std::io::Write;

fn main() -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "== synthesized SWIM-like day, 1000 nodes ==")?;
    write!(
        out,
        "{}",
        weft_sim::experiments::bench(1000, 6000, 1, None)?
    )?;
    if let Some(path) = std::env::var_os("WEFT_SWIM_TRACE") {
        let trace = std::fs::read_to_string(&path)?;
        writeln!(out, "== {} on 1000 nodes ==", path.to_string_lossy())?;
        write!(
            out,
            "{}",
            weft_sim::experiments::bench(1000, 0, 1, Some(&trace))?
        )?;
    }
    Ok(())
}
