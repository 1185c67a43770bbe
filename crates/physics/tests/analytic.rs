//! Analytic checks: the solver against closed-form mechanics.

use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_physics::{BodyBuilder, Shape, World, WorldSettings};

fn fx(s: &str) -> Fx {
    s.parse().unwrap()
}

fn ground(world: &mut World) {
    world
        .add_body(BodyBuilder::fixed(Shape::HalfSpace))
        .unwrap();
}

/// A world kept awake whose ground is tilted by `angle` about z (it falls
/// towards −x), with `friction`; returns it and the tilt.
fn slope(angle: Fx, friction: Fx) -> (World, Quat) {
    let tilt = Quat::from_axis_angle(Vec3::Z, angle);
    let mut world = World::new(WorldSettings {
        sleeping: false,
        ..WorldSettings::default()
    });
    world
        .add_body(
            BodyBuilder::fixed(Shape::HalfSpace)
                .orientation(tilt)
                .friction(friction),
        )
        .unwrap();
    (world, tilt)
}

#[test]
fn projectile_matches_closed_form() {
    let settings = WorldSettings {
        sleeping: false,
        ..WorldSettings::default()
    };
    let mut world = World::new(settings);
    let v0 = Vec3::new(Fx::from_int(12), Fx::from_int(60), Fx::from_int(-5));
    let ball = world
        .add_body(
            BodyBuilder::dynamic(Shape::Sphere { radius: Fx::HALF })
                .position(Vec3::from_ints(0, 100, 0))
                .linear_velocity(v0),
        )
        .unwrap();
    let n = 1800;
    for _ in 0..n {
        world.step();
    }
    // Semi-implicit Euler over N substeps of h gives y = y0 + v0 t −
    // g h² N(N+1)/2: it trails the continuous parabola by g·h·t/2, which is
    // under 0.1 % of the displacement after 30 s of flight.
    let p = world.body(ball).unwrap().position();
    let t = Fx::from_int(30);
    let g = fx("9.81");
    let start = Vec3::from_ints(0, 100, 0);
    let expected = start + v0 * t - Vec3::new(Fx::ZERO, (g * t * t).scale_pow2(-1), Fx::ZERO);
    let error = (p - expected).length() / (expected - start).length();
    assert!(
        error < fx("0.001"),
        "{p:?} vs {expected:?}: relative error {error}"
    );
    let substeps = i64::from(settings.substeps);
    let h = Fx::from_ratio(1, 60 * substeps);
    let big_n = i64::from(n) * substeps;
    let y_disc =
        Fx::from_int(100) + v0.y * t - g * h * h * Fx::from_int((big_n * (big_n + 1) / 2) as i32);
    // Q32.32 rounding of h and g·h over 7 200 substeps stays within 1 cm.
    assert!(
        (p.y - y_disc).abs() < fx("0.01"),
        "y {} vs discrete {}",
        p.y,
        y_disc
    );
}

#[test]
fn sphere_bounces_to_e_squared_h() {
    let e = fx("0.8");
    let settings = WorldSettings {
        sleeping: false,
        ..WorldSettings::default()
    };
    let mut world = World::new(settings);
    ground(&mut world);
    let r = fx("0.25");
    let h0 = Fx::from_int(5);
    let ball = world
        .add_body(
            BodyBuilder::dynamic(Shape::Sphere { radius: r })
                .position(Vec3::new(Fx::ZERO, h0 + r, Fx::ZERO))
                .restitution(e),
        )
        .unwrap();
    let mut going_up = false;
    let mut apex = Fx::ZERO;
    for _ in 0..600 {
        world.step();
        let b = world.body(ball).unwrap();
        let vy = b.linear_velocity().y;
        if vy.is_positive() {
            going_up = true;
            apex = apex.max(b.position().y - r);
        } else if going_up {
            break;
        }
    }
    let expected = e * e * h0;
    let err = (apex - expected).abs() / expected;
    assert!(
        err < fx("0.02"),
        "apex {apex}, expected {expected}, error {err}"
    );
}

#[test]
fn sliding_box_stops_at_v2_over_2_mu_g() {
    let settings = WorldSettings {
        sleeping: false,
        ..WorldSettings::default()
    };
    let mut world = World::new(settings);
    ground(&mut world);
    let mu = fx("0.5");
    let v0 = Fx::from_int(5);
    let cube = world
        .add_body(
            BodyBuilder::dynamic(Shape::box_with_size(Vec3::splat(Fx::ONE)))
                .position(Vec3::new(Fx::ZERO, Fx::HALF, Fx::ZERO))
                .friction(mu),
        )
        .unwrap();
    // Let it settle into its resting contact first, then launch it.
    for _ in 0..600 {
        world.step();
    }
    let x0 = world.body(cube).unwrap().position().x;
    world.set_linear_velocity(cube, Vec3::new(v0, Fx::ZERO, Fx::ZERO));
    for _ in 0..300 {
        world.step();
    }
    let x = world.body(cube).unwrap().position().x - x0;
    let expected = v0 * v0 / (mu * fx("9.81")).mul_int(2);
    let err = (x - expected).abs() / expected;
    assert!(
        err < fx("0.02"),
        "slid {x}, expected {expected}, error {err}"
    );
}

#[test]
fn box_on_slope_below_friction_angle_does_not_creep() {
    // A 20° slope (tan 20° = 0.364) with μ = 0.6: static friction holds.
    let angle = fx("0.349066");
    let (mut world, tilt) = slope(angle, fx("0.6"));
    let up = tilt.rotate(Vec3::Y);
    let start = up * fx("0.5");
    let cube = world
        .add_body(
            BodyBuilder::dynamic(Shape::box_with_size(Vec3::splat(Fx::ONE)))
                .position(start)
                .orientation(tilt)
                .friction(fx("0.6")),
        )
        .unwrap();
    // Settling into the contact slop takes a few seconds (the soft contact
    // sinks slowly until the overlap reaches the slop); then nothing moves.
    for _ in 0..600 {
        world.step();
    }
    let settled = world.body(cube).unwrap().position();
    for _ in 0..600 {
        world.step();
    }
    let end = world.body(cube).unwrap().position();
    // Along the slope only: sinking into the contact slop is not creep.
    let downhill = tilt.rotate(Vec3::X);
    let creep = (end - settled).dot(downhill).abs();
    assert!(creep < fx("0.0001"), "crept {creep} m in 10 s");
}

fn capsule() -> Shape {
    Shape::Capsule {
        half_height: Fx::ONE,
        radius: Fx::HALF,
    }
}

/// The rotation that lays a capsule's axis (local y) along world x.
fn lying() -> Quat {
    Quat::from_axis_angle(Vec3::Z, Fx::FRAC_PI_2)
}

#[test]
fn capsules_rest_at_their_radius_on_ground_box_and_each_other() {
    let settings = WorldSettings {
        sleeping: false,
        ..WorldSettings::default()
    };
    let mut world = World::new(settings);
    ground(&mut world);
    // Lying on the ground.
    let on_ground = world
        .add_body(
            BodyBuilder::dynamic(capsule())
                .position(Vec3::new(Fx::ZERO, fx("0.6"), Fx::ZERO))
                .orientation(lying()),
        )
        .unwrap();
    // Lying across a static 2 m box (top at y = 2), away from the first.
    world
        .add_body(
            BodyBuilder::fixed(Shape::box_with_size(Vec3::splat(Fx::TWO)))
                .position(Vec3::from_ints(10, 1, 0)),
        )
        .unwrap();
    let on_box = world
        .add_body(
            BodyBuilder::dynamic(capsule())
                .position(Vec3::new(Fx::from_int(10), fx("2.6"), Fx::ZERO))
                .orientation(Quat::from_axis_angle(Vec3::X, Fx::FRAC_PI_2)),
        )
        .unwrap();
    // Crossed over another lying capsule, on the ground.
    let below = world
        .add_body(
            BodyBuilder::dynamic(capsule())
                .position(Vec3::new(Fx::ZERO, fx("0.5"), Fx::from_int(-8)))
                .orientation(lying()),
        )
        .unwrap();
    let above = world
        .add_body(
            BodyBuilder::dynamic(capsule())
                .position(Vec3::new(Fx::ZERO, fx("1.6"), Fx::from_int(-8)))
                .orientation(Quat::from_axis_angle(Vec3::X, Fx::FRAC_PI_2)),
        )
        .unwrap();
    for _ in 0..300 {
        world.step();
    }
    let y = |h| world.body(h).unwrap().position().y;
    let mm = fx("0.001");
    assert!(
        (y(on_ground) - Fx::HALF).abs() < mm,
        "on the ground at {}",
        y(on_ground)
    );
    assert!(
        (y(on_box) - fx("2.5")).abs() < mm,
        "on the box at {}",
        y(on_box)
    );
    assert!((y(below) - Fx::HALF).abs() < mm, "below at {}", y(below));
    assert!(
        (y(above) - fx("1.5")).abs() < fx("0.002"),
        "above at {}",
        y(above)
    );
    // Nothing rolled or slid away.
    let x = world.body(on_ground).unwrap().position().x;
    assert!(x.abs() < mm, "rolled to x = {x}");
}

/// A capsule rolling down a slope about its axis without slipping
/// accelerates at g·sinθ / (1 + I/(m r²)), I its moment about the axis.
#[test]
fn capsule_rolls_down_a_slope_at_the_rolling_acceleration() {
    let angle = fx("0.2");
    let (mut world, tilt) = slope(angle, Fx::ONE);
    let up = tilt.rotate(Vec3::Y);
    // Axis along z: it rolls down the slope, which falls towards −x.
    let roller = world
        .add_body(
            BodyBuilder::dynamic(capsule())
                .position(up * Fx::HALF)
                .orientation(tilt * Quat::from_axis_angle(Vec3::X, Fx::FRAC_PI_2))
                .friction(Fx::ONE),
        )
        .unwrap();
    for _ in 0..10 {
        world.step();
    }
    let start = world.body(roller).unwrap().position();
    let frames = 120;
    for _ in 0..frames {
        world.step();
    }
    let moved = (world.body(roller).unwrap().position() - start).length();
    let mp = capsule().mass_properties(fx("1000"));
    let r = Fx::HALF;
    let g = fx("9.81");
    let a = g * angle.sin() / (Fx::ONE + mp.inertia.y / (mp.mass * r * r));
    // Starting with the speed of 10 frames of rolling.
    let t0 = Fx::from_ratio(10, 60);
    let t1 = Fx::from_ratio(10 + frames, 60);
    let expected = (a * (t1 * t1 - t0 * t0)).scale_pow2(-1);
    let err = (moved - expected).abs() / expected;
    assert!(
        err < fx("0.03"),
        "rolled {moved}, expected {expected}, error {err}"
    );
}
