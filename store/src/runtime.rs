//! Runtimes that live on a thread of their own, for work kept off the callers' runtime, and
//! the one CPU the group writer's thread is kept on.

/// Drives `rt` on a thread of its own named `name`, for as long as the process lives, and
/// returns the handle that spawns onto it (the group writer's runtime, the server's history
/// passes'). Panics when the thread cannot be started.
pub fn runtime_thread(name: &str, rt: tokio::runtime::Runtime) -> tokio::runtime::Handle {
    runtime_thread_on(name, rt, None)
}

/// [`runtime_thread`] on the one CPU `cpu`, when given; threads the runtime starts (SQLite's
/// connection threads among them) inherit it.
pub(crate) fn runtime_thread_on(
    name: &str,
    rt: tokio::runtime::Runtime,
    cpu: Option<usize>,
) -> tokio::runtime::Handle {
    let handle = rt.handle().clone();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            if let Some(id) = cpu
                && !core_affinity::set_for_current(core_affinity::CoreId { id })
            {
                let thread = std::thread::current();
                let name = thread.name().unwrap_or_default();
                tracing::warn!("could not keep the thread {name} on CPU {id}");
            }
            rt.block_on(std::future::pending::<()>())
        })
        .unwrap_or_else(|e| panic!("cannot start the thread {name}: {e}"));
    handle
}

/// The environment variable that chooses the writer's CPU (see [`writer_cpu`]).
pub(crate) const WRITER_CPU_VAR: &str = "QUIESCENT_WRITER_CPU";

/// The CPU the group writer's thread and its SQLite connection's thread are kept on, from
/// `QUIESCENT_WRITER_CPU` and the CPUs this process may run on.
///
/// Why one CPU: every statement of a group is handed from the writer's thread to the
/// connection's thread and its answer back, a dozen hand-offs a group, each a wake-up of a
/// sleeping thread. On two CPUs each such wake-up is an interrupt sent to the other CPU (an
/// exit to the hypervisor on a virtual machine); on one, a switch between two threads. The two
/// never run at once (each waits for the other's answer), so one CPU loses them nothing. In
/// 3 alternating pairs of runs on a 2-CPU virtual machine (`bench_upload 3`), the 4x1 uploads'
/// median ratio to `/healthz` went from 1/20.1-1/21.4 to 1/18.2-1/18.9.
pub(crate) fn writer_cpu() -> Option<usize> {
    let allowed: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    let setting = std::env::var(WRITER_CPU_VAR).ok();
    match choose_writer_cpu(setting.as_deref(), &allowed) {
        Ok(cpu) => cpu,
        Err(e) => {
            tracing::warn!("{WRITER_CPU_VAR}: {e}; the writer's thread runs on any CPU");
            None
        }
    }
}

/// The writer's CPU for the setting `setting` (unset, `none`, or a CPU number) and the CPUs
/// `allowed` to this process: unset, the last allowed one when there are several (CPU 0 often
/// takes more of the kernel's interrupts and housekeeping); `none`, none.
pub(crate) fn choose_writer_cpu(
    setting: Option<&str>,
    allowed: &[usize],
) -> Result<Option<usize>, String> {
    match setting.map(str::trim) {
        None | Some("") => Ok(if allowed.len() > 1 {
            allowed.iter().copied().max()
        } else {
            None
        }),
        Some("none") => Ok(None),
        Some(s) => {
            let cpu: usize = s
                .parse()
                .map_err(|_| format!("expected a CPU number or `none`, got `{s}`"))?;
            if allowed.contains(&cpu) {
                Ok(Some(cpu))
            } else {
                Err(format!(
                    "CPU {cpu} is not one this process may run on ({allowed:?})"
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::choose_writer_cpu;

    #[test]
    fn unset_takes_the_last_allowed_cpu_only_when_there_are_several() {
        assert_eq!(choose_writer_cpu(None, &[0, 1, 2, 3]), Ok(Some(3)));
        assert_eq!(choose_writer_cpu(Some(" "), &[4, 6]), Ok(Some(6)));
        assert_eq!(choose_writer_cpu(None, &[2]), Ok(None));
        assert_eq!(choose_writer_cpu(None, &[]), Ok(None));
    }

    #[test]
    fn a_number_must_be_allowed_and_none_turns_it_off() {
        assert_eq!(choose_writer_cpu(Some("1"), &[0, 1]), Ok(Some(1)));
        assert_eq!(choose_writer_cpu(Some("none"), &[0, 1]), Ok(None));
        let e = choose_writer_cpu(Some("5"), &[0, 1]).unwrap_err();
        assert!(e.contains("CPU 5 is not one"), "{e}");
        let e = choose_writer_cpu(Some("last"), &[0, 1]).unwrap_err();
        assert!(
            e.contains("expected a CPU number or `none`, got `last`"),
            "{e}"
        );
    }
}
