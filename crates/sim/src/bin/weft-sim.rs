//! `weft-sim`: the simulator's command line on its own (the `weft` binary
//! offers the same as `weft sim`).

fn main() -> anyhow::Result<()> {
    weft_sim::main_with_args(std::env::args_os())
}
