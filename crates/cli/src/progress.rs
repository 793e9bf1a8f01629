//! Progress on the terminal, and the stop request (Ctrl-C) a long run heeds.

/// A progress bar on standard error counting `len` `what`.
pub fn bar(len: u64, what: &str) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::with_draw_target(
        Some(len),
        indicatif::ProgressDrawTarget::stderr(),
    );
    b.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{elapsed_precise}} [{{wide_bar}}] {{pos}}/{{len}} {what}, {{msg}}, eta {{eta}}"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b
}

/// Set by the first Ctrl-C (or TERM): the run stops at its next check and reports what it
/// has; a second one ends the program at once.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Installs the handler of Ctrl-C (and TERM) that sets [`STOP`].
pub fn install_stop_handler() {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
}

/// Shows a run's progress on a terminal and passes on a stop request.
pub struct RunMonitor {
    /// The bar the progress is drawn on.
    pub bar: indicatif::ProgressBar,
}

impl numaplace_core::Monitor for RunMonitor {
    fn progress(&mut self, p: numaplace_core::Progress) -> bool {
        if self.bar.length().is_some_and(|l| p.ops > l) {
            self.bar.set_length(p.ops);
        }
        self.bar.set_position(p.ops);
        self.bar
            .set_message(format!("simulated {:.6} s", p.now.0 as f64 * 1e-9));
        !STOP.load(std::sync::atomic::Ordering::SeqCst)
    }
}
