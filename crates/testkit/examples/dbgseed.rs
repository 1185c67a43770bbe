//! temp
use lockstep_games::rts::Rts;
use lockstep_testkit::faulty::Faulty;
use lockstep_testkit::mesh;
use lockstep_testkit::soak;
fn main() {
    let seed: u64 = std::env::args().nth(1).unwrap().parse().unwrap();
    let plan = soak::plan(seed);
    println!(
        "{:?} {:?} {:?}",
        plan.scenario.partition, plan.scenario.pause, plan.scenario.fault
    );
    println!("{:?}", plan.scenario.link);
    let run = mesh::run::<Faulty<Rts>>(&plan.scenario, &soak::rts_config());
    for (i, p) in run.processes() {
        println!(
            "== peer {i:?} stopped {:?} rejoined {}",
            p.stopped, p.rejoined
        );
        for (t, e) in &p.events {
            println!("  {} {:?}", t.as_micros(), e);
        }
    }
}
