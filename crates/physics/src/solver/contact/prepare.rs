//! Building a contact constraint from a manifold: its points' lever arms,
//! effective masses and coupling, the normal block's factors, friction's
//! anchor and twist, and (where its constants fit) its narrow form. Runs
//! once per manifold and step, before any pass.

use super::*;

/// Builds a constraint from a manifold, appending its points to `points`;
/// `velocities` are those before solving (for restitution). Anchored
/// constraints (`TWO == false`) ignore `a`.
pub(crate) fn prepare<const TWO: bool>(
    a: &BodyInfo,
    b: &BodyInfo,
    m: &ManifoldInput<'_>,
    velocities: &[super::Velocity],
    points: &mut Vec<Point>,
) -> Constraint {
    let n = m.normal;
    // A frictionless contact that carries no friction impulse never has
    // one: its tangents only ever meet zero impulses, so any will do, and
    // its friction block is never solved (every pass finds it idle).
    let frictionless = m.friction.is_zero() && m.friction_impulse == Vec3::ZERO;
    let (t0, t1) = if frictionless {
        (Vec3::ZERO, Vec3::ZERO)
    } else {
        n.any_orthonormal_pair()
    };
    let (ima, ia) = if TWO {
        (a.inv_mass, a.inv_inertia)
    } else {
        (Fx::ZERO, Mat3::ZERO)
    };
    let (imb, ib) = (b.inv_mass, b.inv_inertia);
    let va = if TWO {
        velocities[a.index as usize]
    } else {
        Velocity::default()
    };
    let vb = velocities[b.index as usize];
    let turns = turns::<TWO>(a, b, velocities);
    let spin = turns || probe::full_path_forced();
    let count = m.points.len().min(4);
    let first = points.len() as u32;
    let inv_mass_sum = ima + imb;
    let (mut centre, mut arms_a, mut arms_b) = (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO);
    for p in &m.points[..count] {
        // Without spin the lever arms meet only zero inertia and zero
        // angular velocities: leaving them zero changes no result.
        let (ja, ka) = if TWO && spin {
            let ja = cross(p.arm_a, n);
            (ja, mat_vec(&ia, ja))
        } else {
            (Vec3::ZERO, Vec3::ZERO)
        };
        let (jb, kb) = if spin {
            let jb = cross(p.arm_b, n);
            (jb, mat_vec(&ib, jb))
        } else {
            (Vec3::ZERO, Vec3::ZERO)
        };
        let diagonal = inv_mass_sum + dot(ja, ka) + dot(jb, kb);
        let mass = inverse(diagonal);
        let approach = if m.restitution.is_zero() {
            Fx::ZERO
        } else {
            dot(n, vb.linear - va.linear)
                + angular::<TWO, Exact>(ja, va.angular, jb, vb.angular, ARM)
        };
        points.push(Point {
            diagonal,
            ja,
            jb,
            ka,
            kb,
            mass,
            soft_mass: mass * m.soft.mass_scale,
            impulse: p.impulse,
            base: p.separation,
            separation: p.separation,
            approach,
        });
        centre += p.position;
        arms_a += p.arm_a;
        arms_b += p.arm_b;
    }
    let mut coupling = [Fx::ZERO; 6];
    {
        let pts = &points[first as usize..];
        for (slot, (i, j)) in PAIRS.iter().enumerate() {
            if *j < count {
                let (p, q) = (&pts[*i], &pts[*j]);
                coupling[slot] = inv_mass_sum + dot(p.ja, q.ka) + dot(p.jb, q.kb);
            }
        }
    }
    let mut diagonals = [Fx::ZERO; 4];
    for (d, p) in diagonals.iter_mut().zip(&points[first as usize..]) {
        *d = p.diagonal;
    }
    let block = Block::new(count, diagonals, coupling, m.soft);
    let k = count.max(1) as i64;
    let mean = |v: Vec3| Vec3::new(v.x.div_int(k), v.y.div_int(k), v.z.div_int(k));
    // Friction acts at the points' centroid, through their mean arms.
    let (centre, arm_a, arm_b) = (mean(centre), mean(arms_a), mean(arms_b));
    let tangents = [t0, t1];
    let mut tja = [Vec3::ZERO; 2];
    let mut tka = [Vec3::ZERO; 2];
    let mut tjb = [Vec3::ZERO; 2];
    let mut tkb = [Vec3::ZERO; 2];
    for (i, t) in tangents.into_iter().enumerate().filter(|_| spin) {
        if TWO {
            tja[i] = cross(arm_a, t);
            tka[i] = mat_vec(&ia, tja[i]);
        }
        tjb[i] = cross(arm_b, t);
        tkb[i] = mat_vec(&ib, tjb[i]);
    }
    // K⁻¹ of the tangent block (t0 ⊥ t1, so the linear part is
    // diagonal); a frictionless block is never solved.
    let tangent_inverse = if frictionless {
        [Fx::ZERO; 3]
    } else {
        let k00 = inv_mass_sum + dot(tja[0], tka[0]) + dot(tjb[0], tkb[0]);
        let k11 = inv_mass_sum + dot(tja[1], tka[1]) + dot(tjb[1], tkb[1]);
        let k01 = dot(tja[0], tka[1]) + dot(tjb[0], tkb[1]);
        let det = k00.mul_add_mul(k11, -k01, k01);
        if det.is_positive() {
            [k11 / det, -k01 / det, k00 / det]
        } else {
            [Fx::ZERO; 3]
        }
    };
    // The twist lever arm: the points' root-mean-square distance from the
    // centroid (one square root per manifold).
    let spread = m.points[..count]
        .iter()
        .fold(Fx::ZERO, |s, p| s + (p.position - centre).length_squared());
    let (twist_ka, twist_kb) = if count > 1 {
        (mat_vec(&ia, n), mat_vec(&ib, n))
    } else {
        (Vec3::ZERO, Vec3::ZERO)
    };
    let twist_mass = inverse(n.dot(twist_ka) + n.dot(twist_kb));
    let twist_radius = spread.div_int(k).sqrt();
    let mut c = Constraint {
        a: a.index,
        b: b.index,
        first,
        count: count as u8,
        coupling,
        inv_mass_a: ima,
        inv_mass_b: imb,
        normal: n,
        tangents,
        tja,
        tjb,
        tka,
        tkb,
        tangent_inverse,
        tangent_impulse: [m.friction_impulse.dot(t0), m.friction_impulse.dot(t1)],
        twist_ka,
        twist_kb,
        twist_mass,
        twist_impulse: if count > 1 { m.twist_impulse } else { Fx::ZERO },
        friction: m.friction,
        twist_radius,
        restitution: m.restitution,
        soft: m.soft,
        block,
        spin,
        narrow: false,
        scales: Scales::default(),
    };
    if turns && m.restitution.is_zero() {
        c.make_narrow(&mut points[first as usize..]);
    }
    c
}

impl Constraint {
    /// Turns a constraint just built into its narrow form, when its
    /// constants fit (see `products.rs`): the constants the passes read
    /// narrowed, the impulses (and the block's factors) in its impulse
    /// unit. Only a constraint that does not bounce is made narrow:
    /// restitution reads the constants as they are.
    fn make_narrow(&mut self, pts: &mut [Point]) {
        let [mut arms, mut masses, mut ks, mut ratios] = [Widest::default(); 4];
        for p in pts.iter() {
            arms.take3(p.ja);
            arms.take3(p.jb);
            ks.take3(p.ka);
            ks.take3(p.kb);
            ks.take(p.diagonal);
            masses.take(p.mass);
            masses.take(p.soft_mass);
        }
        for i in 0..2 {
            arms.take3(self.tja[i]);
            arms.take3(self.tjb[i]);
            ks.take3(self.tka[i]);
            ks.take3(self.tkb[i]);
        }
        arms.take(self.twist_radius);
        self.coupling.iter().for_each(|&e| ks.take(e));
        ks.take3(self.twist_ka);
        ks.take3(self.twist_kb);
        ks.take(self.inv_mass_a);
        ks.take(self.inv_mass_b);
        self.tangent_inverse.iter().for_each(|&e| masses.take(e));
        masses.take(self.twist_mass);
        ratios.take(self.friction);
        ratios.take(self.soft.impulse_scale);
        let Some(f) = Scales::new(arms, masses, ks, ratios) else {
            return;
        };
        for p in pts.iter_mut() {
            p.ja = f.arm(p.ja);
            p.jb = f.arm(p.jb);
            p.ka = f.k(p.ka);
            p.kb = f.k(p.kb);
            p.diagonal = f.k1(p.diagonal);
            p.mass = f.mass(p.mass);
            p.soft_mass = f.mass(p.soft_mass);
            p.impulse = f.unit_impulse(p.impulse);
        }
        self.coupling = self.coupling.map(|e| f.k1(e));
        self.inv_mass_a = f.k1(self.inv_mass_a);
        self.inv_mass_b = f.k1(self.inv_mass_b);
        self.normal = f.unit(self.normal);
        self.tangents = self.tangents.map(|t| f.unit(t));
        self.tja = self.tja.map(|v| f.arm(v));
        self.tjb = self.tjb.map(|v| f.arm(v));
        self.tka = self.tka.map(|v| f.k(v));
        self.tkb = self.tkb.map(|v| f.k(v));
        self.tangent_inverse = self.tangent_inverse.map(|m| f.mass(m));
        self.tangent_impulse = self.tangent_impulse.map(|l| f.unit_impulse(l));
        self.twist_ka = f.k(self.twist_ka);
        self.twist_kb = f.k(self.twist_kb);
        self.twist_mass = f.mass(self.twist_mass);
        self.twist_impulse = f.unit_impulse(self.twist_impulse);
        self.friction = f.ratio(self.friction);
        self.twist_radius = f.arm1(self.twist_radius);
        self.soft.impulse_scale = f.ratio(self.soft.impulse_scale);
        self.block.rescale_impulses(f.impulse);
        self.scales = f;
        self.narrow = true;
    }
}
