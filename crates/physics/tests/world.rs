//! The game-facing API: handles, removal, events, queries, containment.

use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_physics::{Aabb, BodyBuilder, BodyError, Event, Shape, World, WorldSettings};

fn cube() -> Shape {
    Shape::box_with_size(Vec3::splat(Fx::ONE))
}

#[test]
fn handles_go_stale_when_a_body_is_removed() {
    let mut world = World::new(WorldSettings::default());
    let a = world.add_body(BodyBuilder::dynamic(cube())).unwrap();
    assert!(world.remove_body(a));
    assert!(!world.remove_body(a));
    let b = world.add_body(BodyBuilder::dynamic(cube())).unwrap();
    assert_eq!(a.index, b.index, "the slot is reused");
    assert!(
        world.body(a).is_none(),
        "but the old handle does not reach the new body"
    );
    assert!(world.body(b).is_some());
    assert_eq!(
        world.add_body(BodyBuilder::dynamic(Shape::Sphere { radius: Fx::ZERO })),
        Err(BodyError::InvalidShape)
    );
    assert_eq!(
        world.add_body(BodyBuilder::dynamic(Shape::HalfSpace)),
        Err(BodyError::MovingHalfSpace)
    );
}

#[test]
fn contact_events_begin_and_end() {
    let mut world = World::new(WorldSettings::default());
    let ground = world
        .add_body(BodyBuilder::fixed(Shape::HalfSpace))
        .unwrap();
    let ball = world
        .add_body(
            BodyBuilder::dynamic(Shape::Sphere { radius: Fx::HALF })
                .position(Vec3::from_ints(0, 2, 0)),
        )
        .unwrap();
    let mut began = None;
    for _ in 0..60 {
        world.step();
        if world
            .events()
            .contains(&Event::ContactBegan { a: ground, b: ball })
        {
            began = Some(world.frame());
        }
    }
    assert!(began.is_some(), "the ball lands");
    world.set_linear_velocity(ball, Vec3::from_ints(0, 10, 0));
    let mut ended = false;
    for _ in 0..10 {
        world.step();
        ended |= world
            .events()
            .contains(&Event::ContactEnded { a: ground, b: ball });
    }
    assert!(ended, "the ball leaves the ground");
}

#[test]
fn ray_cast_and_selection_box() {
    let mut world = World::new(WorldSettings::default());
    world
        .add_body(BodyBuilder::fixed(Shape::HalfSpace))
        .unwrap();
    let near = world
        .add_body(BodyBuilder::fixed(cube()).position(Vec3::from_ints(5, 0, 0)))
        .unwrap();
    let far = world
        .add_body(
            BodyBuilder::fixed(Shape::Sphere { radius: Fx::ONE })
                .position(Vec3::from_ints(10, 0, 0)),
        )
        .unwrap();
    // Above the ground (a ray starting inside a shape hits it at 0).
    let origin = Vec3::new(Fx::ZERO, Fx::lit("0.25"), Fx::ZERO);
    let hit = world
        .ray_cast(origin, Vec3::X, Fx::from_int(100), u32::MAX)
        .unwrap();
    assert_eq!(hit.body, near);
    assert_eq!(hit.distance, Fx::lit("4.5"));
    assert_eq!(hit.normal, -Vec3::X);
    // A rotated box still reports its surface.
    world.set_pose(
        near,
        Vec3::from_ints(5, 0, 0),
        Quat::from_axis_angle(Vec3::Y, Fx::FRAC_PI_4),
    );
    let hit = world
        .ray_cast(origin, Vec3::X, Fx::from_int(100), u32::MAX)
        .unwrap();
    assert!(
        (hit.distance - (Fx::from_int(5) - Fx::HALF * Fx::TWO.sqrt())).abs() < Fx::lit("0.0001")
    );
    // Straight down hits the ground.
    let down = world
        .ray_cast(
            Vec3::from_ints(0, 3, 0),
            -Vec3::Y,
            Fx::from_int(10),
            u32::MAX,
        )
        .unwrap();
    assert_eq!(down.distance, Fx::from_int(3));
    let area = Aabb::from_corners(Vec3::from_ints(8, -2, -2), Vec3::from_ints(12, 2, 2));
    assert_eq!(world.query_aabb(&area, u32::MAX), vec![far]);
}

#[test]
fn a_body_leaving_the_world_is_contained_and_reported() {
    let settings = WorldSettings {
        bounds: Fx::from_int(1000),
        ..WorldSettings::default()
    };
    let mut world = World::new(settings);
    let runaway = world
        .add_body(
            BodyBuilder::dynamic(cube())
                .position(Vec3::from_ints(990, 50, 0))
                .linear_velocity(Vec3::from_ints(200, 0, 0)),
        )
        .unwrap();
    let mut reported = None;
    for _ in 0..10 {
        world.step();
        if world.events().contains(&Event::BodyContained(runaway)) {
            reported = Some(world.frame());
        }
    }
    assert!(reported.is_some());
    let b = world.body(runaway).unwrap();
    assert!(b.is_contained() && !b.is_awake());
    let frozen = b.position();
    world.step();
    assert_eq!(
        world.body(runaway).unwrap().position(),
        frozen,
        "contained bodies stay put"
    );
}

/// `query_aabb` (a grid index built on the first query of a state) reports
/// exactly the bodies a scan of every body would, in slot order: small and
/// huge bodies, removed and moved ones, any area, any mask; and
/// `query_aabb_each` visits those bodies, each once.
#[test]
fn query_aabb_matches_a_scan_of_every_body() {
    use lockstep_fx::{Mat3, Rng};
    let mut rng = Rng::new(0x9e7, 1);
    let mut world = World::new(WorldSettings::default());
    world
        .add_body(BodyBuilder::fixed(Shape::HalfSpace))
        .unwrap();
    let mut handles = Vec::new();
    for i in 0..600u32 {
        let p = Vec3::new(
            rng.fx_range(Fx::from_int(-80), Fx::from_int(80)),
            rng.fx_range(Fx::ZERO, Fx::from_int(4)),
            rng.fx_range(Fx::from_int(-80), Fx::from_int(80)),
        );
        let shape = match i % 7 {
            0 => Shape::box_with_size(Vec3::new(Fx::from_int(40), Fx::ONE, Fx::ONE)),
            1 | 2 => Shape::Sphere {
                radius: rng.fx_range(Fx::lit("0.1"), Fx::from_int(2)),
            },
            _ => Shape::box_with_size(Vec3::splat(rng.fx_range(Fx::lit("0.2"), Fx::from_int(3)))),
        };
        let b = BodyBuilder::dynamic(shape)
            .position(p)
            .orientation(Quat::from_axis_angle(
                Vec3::Y,
                rng.fx_range(Fx::ZERO, Fx::PI),
            ))
            .collision_groups(1 << (i % 5), u32::MAX);
        handles.push(world.add_body(b).unwrap());
    }
    for (k, h) in handles.iter().enumerate() {
        if k % 11 == 0 {
            world.remove_body(*h);
        }
    }
    // The oracle: every body's own bounds, checked one by one.
    let scan = |world: &World, area: &Aabb, mask: u32| {
        world
            .bodies()
            .filter(|(_, b)| b.collision_groups().0 & mask != 0 && !b.is_contained())
            .filter(|(_, b)| {
                let bounds = match b.shape() {
                    Shape::Box { half_extents } => Aabb::of_box(
                        b.position(),
                        &Mat3::from_quat(b.orientation()),
                        half_extents,
                    ),
                    Shape::Sphere { radius } => Aabb::of_sphere(b.position(), radius),
                    _ => return false,
                };
                bounds.overlaps(area)
            })
            .map(|(h, _)| h)
            .collect::<Vec<_>>()
    };
    for round in 0..300 {
        if round == 150 {
            // A step moves everything: the index is rebuilt.
            world.step();
        }
        let c = Vec3::new(
            rng.fx_range(Fx::from_int(-100), Fx::from_int(100)),
            rng.fx_range(Fx::from_int(-5), Fx::from_int(5)),
            rng.fx_range(Fx::from_int(-100), Fx::from_int(100)),
        );
        let half = match round % 5 {
            0 => Vec3::splat(Fx::from_int(1 << 20)),
            1 => Vec3::new(Fx::from_int(200), Fx::ONE, Fx::lit("0.5")),
            _ => Vec3::splat(rng.fx_range(Fx::ZERO, Fx::from_int(12))),
        };
        let area = Aabb::from_corners(c - half, c + half);
        let mask = if round % 3 == 0 {
            u32::MAX
        } else {
            1 << (round % 5)
        };
        let expected = scan(&world, &area, mask);
        assert_eq!(world.query_aabb(&area, mask), expected, "round {round}");
        // The visitor sees the same bodies, each once, with the world's
        // own view of each.
        let mut visited = Vec::new();
        world.query_aabb_each(&area, mask, |h, b| {
            assert!(world.body(h).is_some_and(|own| core::ptr::eq(own, b)));
            visited.push(h);
        });
        visited.sort_unstable_by_key(|h| h.index);
        assert_eq!(visited, expected, "round {round}, visitor");
    }
}

#[test]
fn removing_bodies_at_once_leaves_the_world_removing_them_in_turn_leaves() {
    // A heap of cubes, settled for a while, then every third one removed.
    let build = || {
        let mut world = World::new(WorldSettings::default());
        world
            .add_body(BodyBuilder::fixed(Shape::HalfSpace))
            .unwrap();
        let mut cubes = Vec::new();
        for i in 0..30i32 {
            let at = Vec3::new(Fx::from_int(i % 5), Fx::from_int(1 + i / 5), Fx::ZERO);
            cubes.push(
                world
                    .add_body(BodyBuilder::dynamic(cube()).position(at))
                    .unwrap(),
            );
        }
        for _ in 0..90 {
            world.step();
        }
        (world, cubes)
    };
    let (mut one_by_one, cubes) = build();
    let (mut at_once, _) = build();
    let doomed: Vec<_> = cubes.iter().copied().step_by(3).collect();
    for &h in &doomed {
        assert!(one_by_one.remove_body(h));
    }
    let mut with_a_repeat = doomed.clone();
    with_a_repeat.push(doomed[0]);
    assert_eq!(at_once.remove_bodies(&with_a_repeat), doomed.len());
    let ended = |w: &World| {
        let mut e: Vec<_> = w.events().iter().map(|e| format!("{e:?}")).collect();
        e.sort();
        e
    };
    assert!(!ended(&one_by_one).is_empty());
    assert_eq!(ended(&at_once), ended(&one_by_one));
    assert_eq!(at_once.checksum(), one_by_one.checksum());
    for _ in 0..60 {
        one_by_one.step();
        at_once.step();
        assert_eq!(at_once.checksum(), one_by_one.checksum());
    }
    // The freed slots are reused in the same order.
    let a = at_once.add_body(BodyBuilder::dynamic(cube())).unwrap();
    let b = one_by_one.add_body(BodyBuilder::dynamic(cube())).unwrap();
    assert_eq!(a, b);
}

/// A box resting on a kinematic platform that creeps slower than the sleep
/// speed is still by its own speed, but never sleeps while the platform
/// moves under it; on a platform that stands still the same box sleeps.
/// A box on the ground beside it (when there is one) sleeps either way.
#[test]
fn a_body_on_a_moving_kinematic_body_stays_awake() {
    let run = |creep: Fx, with_beside: bool| {
        let mut world = World::new(WorldSettings::default());
        world
            .add_body(BodyBuilder::fixed(Shape::HalfSpace))
            .unwrap();
        let platform = world
            .add_body(
                BodyBuilder::kinematic(Shape::box_with_size(Vec3::new(
                    Fx::from_int(4),
                    Fx::ONE,
                    Fx::from_int(4),
                )))
                .position(Vec3::new(Fx::ZERO, Fx::lit("0.5"), Fx::ZERO))
                .linear_velocity(Vec3::new(creep, Fx::ZERO, Fx::ZERO)),
            )
            .unwrap();
        let riding = world
            .add_body(BodyBuilder::dynamic(cube()).position(Vec3::new(
                Fx::ZERO,
                Fx::lit("1.5"),
                Fx::ZERO,
            )))
            .unwrap();
        let beside = with_beside.then(|| {
            world
                .add_body(BodyBuilder::dynamic(cube()).position(Vec3::new(
                    Fx::from_int(10),
                    Fx::lit("0.5"),
                    Fx::ZERO,
                )))
                .unwrap()
        });
        for _ in 0..245 {
            world.step();
        }
        let awake = |world: &World, h| world.body(h).unwrap().is_awake();
        let result = (awake(&world, riding), beside.map(|h| awake(&world, h)));
        // Once the platform stops, the box has counted no still frame on
        // it: it sleeps only after a whole `sleep_frames` of its own.
        world.set_linear_velocity(platform, Vec3::ZERO);
        let mut after = 0;
        while awake(&world, riding) && after < 100 {
            world.step();
            after += 1;
        }
        (result, after)
    };
    let needed = WorldSettings::default().sleep_frames;
    assert_eq!(
        run(Fx::ZERO, true),
        ((false, Some(false)), 0),
        "a still platform"
    );
    let creep = Fx::lit("0.01");
    for with_beside in [false, true] {
        let (result, after) = run(creep, with_beside);
        assert_eq!(
            result,
            (true, with_beside.then_some(false)),
            "a creeping platform, a box beside: {with_beside}"
        );
        assert!(
            (needed..needed + 3).contains(&after),
            "asleep {after} frames after the platform stopped (beside: {with_beside})"
        );
    }
}
