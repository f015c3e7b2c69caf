//! The split step: E-divisive means in sliding windows proposes weak change points.

use super::DetectSettings;
use super::builds::Builds;
use super::test;

/// A weak change point: the first build of a new regime, and the window that proposed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Weak {
    pub index: usize,
    pub window: usize,
}

/// The relaxed level of the split step, as Otava: the merge step then applies `alpha`.
pub(super) fn weak_alpha(alpha: f64) -> f64 {
    if alpha < 0.05 {
        alpha * 10.0
    } else if alpha < 0.5 {
        alpha * 2.0
    } else {
        alpha
    }
}

/// Window length and step of the grid (windows start at multiples of the step).
pub(super) fn grid(settings: &DetectSettings) -> (usize, usize) {
    let window = settings.window.max(2 * min_segment(settings) + 1);
    (window, (window / 2).max(1))
}

/// At least 2: E-divisive needs two values a side to measure the spread within.
pub(super) fn min_segment(settings: &DetectSettings) -> usize {
    settings.min_segment.max(2)
}

/// Weak change points of the windows whose end lies beyond build `from` (all windows when
/// `from` is 0); the caller keeps those of earlier windows.
pub(super) fn split(builds: &Builds, settings: &DetectSettings, from: usize) -> Vec<Weak> {
    let (window, step) = grid(settings);
    let n = builds.len();
    let means = builds.means();
    let mut found = Vec::new();
    // The first window reaching beyond `from`: earlier ones are kept by the caller.
    let mut start = (from + 1).saturating_sub(window).div_ceil(step) * step;
    while start < n {
        let end = (start + window).min(n);
        for index in window_change_points(builds, means, start, end, settings) {
            found.push(Weak {
                index,
                window: start,
            });
        }
        if end == n {
            break;
        }
        start += step;
    }
    found
}

/// E-divisive in builds `s..e`: repeatedly the best split of any current interval, kept while
/// its test passes the weak level.
fn window_change_points(
    builds: &Builds,
    means: &[f64],
    s: usize,
    e: usize,
    settings: &DetectSettings,
) -> Vec<usize> {
    let m = min_segment(settings);
    if e - s < 2 * m {
        return Vec::new();
    }
    let energy = Energy::new(&means[s..e]);
    let level = weak_alpha(settings.alpha);
    // Current intervals (window coordinates) with their best candidate, if any.
    let mut cuts = vec![0, e - s];
    let mut found = Vec::new();
    let mut best: Vec<Option<Candidate>> = vec![energy.best(0, e - s, m)];
    loop {
        let pick = best
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.map(|c| (i, c)))
            .max_by(|x, y| x.1.q.total_cmp(&y.1.q));
        let Some((i, Candidate { tau, kappa, .. })) = pick else {
            break;
        };
        let (a, b) = (cuts[i], cuts[i + 1]);
        // Tested on the two samples E-divisive compared, a..tau against tau..kappa: against
        // all of tau..b, a return to the old level after kappa (a pulse) would hide the change.
        if test::split(builds, s + a, s + tau, s + kappa, m).p > level {
            break;
        }
        found.push(s + tau);
        cuts.insert(i + 1, tau);
        best.splice(i..=i, [energy.best(a, tau, m), energy.best(tau, b, m)]);
    }
    found.sort_unstable();
    found
}

/// The best split of an interval: `tau` starts the new regime, `kappa` ends the sample it was
/// compared with, `q` is the divergence.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate {
    tau: usize,
    kappa: usize,
    q: f64,
}

/// Sums of pairwise distances |z_i - z_j| within every interval of a window.
struct Energy {
    len: usize,
    /// within[i * (len + 1) + j]: sum over i <= u < v < j.
    within: Vec<f64>,
}

impl Energy {
    fn new(z: &[f64]) -> Self {
        let len = z.len();
        let w = len + 1;
        let mut within = vec![0.0; w * w];
        let mut col = vec![0.0; len];
        for j in 1..=len {
            // col[i] = sum over i <= t < j - 1 of |z_t - z_{j-1}|, built from the right.
            let zj = z[j - 1];
            let mut acc = 0.0;
            for i in (0..j - 1).rev() {
                acc += (z[i] - zj).abs();
                col[i] = acc;
            }
            for i in 0..j - 1 {
                within[i * w + j] = within[i * w + j - 1] + col[i];
            }
        }
        Self { len, within }
    }

    fn w(&self, i: usize, j: usize) -> f64 {
        self.within[i * (self.len + 1) + j]
    }

    /// The split tau of `a..b` maximising Matteson and James' Q over every right end kappa,
    /// with at least `m` values in `a..tau` and in `tau..kappa`.
    fn best(&self, a: usize, b: usize, m: usize) -> Option<Candidate> {
        if b - a < 2 * m {
            return None;
        }
        let mut best: Option<Candidate> = None;
        for tau in a + m..=b - m {
            let n = (tau - a) as f64;
            let wx = self.w(a, tau);
            for kappa in tau + m..=b {
                let k = (kappa - tau) as f64;
                let wy = self.w(tau, kappa);
                let cross = self.w(a, kappa) - wx - wy;
                let q = 2.0 / (n + k) * cross
                    - 2.0 * k / ((n + k) * (n - 1.0)) * wx
                    - 2.0 * n / ((n + k) * (k - 1.0)) * wy;
                if best.is_none_or(|b| q > b.q) {
                    best = Some(Candidate { tau, kappa, q });
                }
            }
        }
        best
    }
}
