//! The real device: the CUDA driver API through cudarc, NVML through nvml-wrapper, both loaded at run
//! time, and nothing else: the kernels are PTX embedded in the binary ([`kernels::PTX`]), JIT-compiled by
//! the driver's module loader, so a node with only the NVIDIA driver (what the GPU Operator's container
//! toolkit gives a container) runs the probe. Nothing here is called before [`driver_present`] said libcuda
//! loads, since cudarc's dynamically loaded entry points panic without it.

use crate::detect::{classify, format_uuid, HostFacts, RoleIdentity};
use crate::device::{
    Backend, BufferId, Detection, DeviceSpec, GpuSession, Pattern, Role, Timing, WorkerDevice,
};
use crate::error::{DeviceError, ProbeError};
use crate::kernels;
use cudarc::driver::{result, sys};
use gpu_trust_model::evidence::{DeviceEvidence, DriverEvidence, MechanismEvidence};
use nvml_wrapper::enum_wrappers::device::ComputeMode;
use nvml_wrapper::Nvml;
use std::collections::BTreeMap;
use std::ffi::{c_void, CString};
use std::path::Path;
use std::time::{Duration, Instant};

const MIB: u64 = 1024 * 1024;

/// Where an MPS client looks for its control daemon when `CUDA_MPS_PIPE_DIRECTORY` is unset.
/// Source: NVIDIA Multi-Process Service documentation, environment variables (CUDA_MPS_PIPE_DIRECTORY,
/// default `/tmp/nvidia-mps`); the daemon's socket in it is named `control`.
const MPS_DEFAULT_PIPE_DIR: &str = "/tmp/nvidia-mps";
const MPS_CONTROL_SOCKET: &str = "control";
/// `/proc/<pid>/comm` of the MPS control daemon and server (15 characters kept by the kernel).
const MPS_COMM_PREFIX: &str = "nvidia-cuda-mps";
/// The value of `nvmlDeviceGetMigMode`'s current mode when MIG is on (NVML_DEVICE_MIG_ENABLE).
const NVML_DEVICE_MIG_ENABLE: u32 = 1;
/// An address no allocation ever gets (the first page stays unmapped), for the illegal access.
const INVALID_ADDRESS: u64 = 0x10;
/// Bytes kept of the JIT compiler's error log when the PTX does not load.
const JIT_LOG_BYTES: usize = 4096;

/// Whether libcuda can be loaded.
pub fn driver_present() -> Result<(), ProbeError> {
    // SAFETY: only tries to open the shared library; no entry point is called.
    if unsafe { sys::is_culib_present() } {
        Ok(())
    } else {
        Err(ProbeError::NoDriver(
            "libcuda (the CUDA driver library) could not be loaded".into(),
        ))
    }
}

fn compute_mode_name(m: ComputeMode) -> &'static str {
    match m {
        ComputeMode::Default => "default",
        ComputeMode::ExclusiveThread => "exclusive-thread",
        ComputeMode::Prohibited => "prohibited",
        ComputeMode::ExclusiveProcess => "exclusive-process",
    }
}

/// Whether this process is an MPS client: its pipe directory holds the control daemon's socket. Also
/// says when a daemon runs that this process would not reach.
fn detect_mps() -> (bool, Option<String>, Option<String>) {
    let dir = std::env::var("CUDA_MPS_PIPE_DIRECTORY")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| MPS_DEFAULT_PIPE_DIR.to_string());
    if Path::new(&dir).join(MPS_CONTROL_SOCKET).exists() {
        return (true, Some(dir), None);
    }
    let running = std::fs::read_dir("/proc")
        .map(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    && std::fs::read_to_string(e.path().join("comm"))
                        .is_ok_and(|c| c.trim().starts_with(MPS_COMM_PREFIX))
            })
        })
        .unwrap_or(false);
    let note = running.then(|| {
        format!(
            "an MPS daemon runs on this host, but {dir} has no control socket: this process is not its client (set CUDA_MPS_PIPE_DIRECTORY)"
        )
    });
    (false, None, note)
}

/// The real backend. The parent needs NVML; a worker uses it only to name its device.
pub struct RealBackend {
    nvml: Option<Nvml>,
    inherited_visible: Option<String>,
}

impl RealBackend {
    /// For the parent: libcuda and NVML must both be there.
    pub fn new() -> Result<RealBackend, ProbeError> {
        driver_present()?;
        let nvml = Nvml::init()
            .map_err(|e| ProbeError::NoDriver(format!("NVML could not start ({e})")))?;
        Ok(RealBackend {
            nvml: Some(nvml),
            inherited_visible: std::env::var("CUDA_VISIBLE_DEVICES").ok(),
        })
    }

    /// For a worker process: its `CUDA_VISIBLE_DEVICES` already names its device.
    pub fn for_worker() -> RealBackend {
        RealBackend {
            nvml: Nvml::init().ok(),
            inherited_visible: None,
        }
    }

    fn nvml(&self) -> Result<&Nvml, ProbeError> {
        self.nvml
            .as_ref()
            .ok_or_else(|| ProbeError::NoDriver("NVML is not initialised".into()))
    }

    fn device<'n>(
        &self,
        nvml: &'n Nvml,
        spec: &DeviceSpec,
    ) -> Result<nvml_wrapper::Device<'n>, ProbeError> {
        let resolved = spec.resolve_visible(self.inherited_visible.as_deref())?;
        match &resolved {
            DeviceSpec::Index(i) => nvml.device_by_index(*i),
            DeviceSpec::GpuUuid(u) | DeviceSpec::MigUuid(u) => nvml.device_by_uuid(u.as_str()),
        }
        .map_err(|e| ProbeError::Device(format!("device `{spec}`: {e}")))
    }

    fn describe(
        &self,
        nvml: &Nvml,
        spec: &DeviceSpec,
    ) -> Result<(DeviceEvidence, bool), ProbeError> {
        let device = self.device(nvml, spec)?;
        let is_mig = device.mig_is_mig_device_handle().unwrap_or(false);
        let parent = if is_mig {
            device.mig_parent_device().ok()
        } else {
            None
        };
        let physical = parent.as_ref().unwrap_or(&device);
        Ok((
            DeviceEvidence {
                spec: spec.to_string(),
                name: device.name().ok(),
                uuid: device.uuid().ok(),
                parent_uuid: parent.as_ref().and_then(|p| p.uuid().ok()),
                index: physical.index().ok(),
                memory_mib: device.memory_info().ok().map(|m| m.total / MIB),
                compute_capability: device
                    .cuda_compute_capability()
                    .ok()
                    .map(|c| format!("{}.{}", c.major, c.minor)),
            },
            is_mig,
        ))
    }
}

impl Backend for RealBackend {
    fn detect(&self, victim: &DeviceSpec, aggressor: &DeviceSpec) -> Result<Detection, ProbeError> {
        let nvml = self.nvml()?;
        let (v, v_mig) = self.describe(nvml, victim)?;
        let (a, a_mig) = self.describe(nvml, aggressor)?;
        let v_dev = self.device(nvml, victim)?;
        let physical = if v_mig {
            v_dev.mig_parent_device().ok()
        } else {
            None
        };
        let physical = physical.as_ref().unwrap_or(&v_dev);
        let mig_mode = physical
            .mig_mode()
            .ok()
            .map(|m| m.current == NVML_DEVICE_MIG_ENABLE);
        let compute_mode = physical.compute_mode().ok().map(compute_mode_name);
        let cc_mode = physical
            .is_cc_enabled()
            .ok()
            .map(|on| if on { "on" } else { "off" }.to_string());
        let (mps, mps_dir, mps_note) = detect_mps();
        let (kind, mut notes) = classify(
            RoleIdentity {
                uuid: v.uuid.as_deref(),
                parent_uuid: v.parent_uuid.as_deref(),
                is_mig: v_mig,
            },
            RoleIdentity {
                uuid: a.uuid.as_deref(),
                parent_uuid: a.parent_uuid.as_deref(),
                is_mig: a_mig,
            },
            HostFacts {
                mps,
                compute_mode,
                mig_mode,
            },
        );
        notes.extend(mps_note);
        if cc_mode.as_deref() == Some("on") {
            notes.push(
                "confidential-computing mode is on: no NVIDIA deployment supports sharing a CC GPU"
                    .into(),
            );
        }
        let cuda_version = nvml.sys_cuda_driver_version().ok().map(|v| {
            format!(
                "{}.{}",
                nvml_wrapper::cuda_driver_version_major(v),
                nvml_wrapper::cuda_driver_version_minor(v)
            )
        });
        Ok(Detection {
            victim: v,
            aggressor: a,
            driver: DriverEvidence {
                version: nvml.sys_driver_version().ok(),
                cuda_version,
            },
            mechanism: MechanismEvidence {
                kind,
                mig_mode,
                mps,
                mps_pipe_directory: mps_dir,
                compute_mode: compute_mode.map(str::to_string),
                cc_mode,
                notes,
                // What a client cannot see (the MPS daemon's defaults): the caller declares them.
                settings: None,
            },
        })
    }

    fn sample_utilisation(&self, victim: &DeviceSpec) -> Option<f64> {
        let nvml = self.nvml.as_ref()?;
        let device = self.device(nvml, victim).ok()?;
        device.utilization_rates().ok().map(|u| f64::from(u.gpu))
    }

    fn open_session(
        &self,
        _role: Role,
        _device: &DeviceSpec,
    ) -> Result<Box<dyn GpuSession>, DeviceError> {
        Ok(Box::new(CudaSession::open(self.nvml.as_ref())?))
    }

    /// The worker sees exactly its device, as device 0: named by UUID where NVML can, since CUDA's own
    /// index order (fastest first) need not be NVML's (PCI bus order).
    fn worker_env(&self, device: &DeviceSpec) -> Vec<(String, String)> {
        let by_uuid = self
            .nvml
            .as_ref()
            .and_then(|nvml| self.device(nvml, device).ok())
            .and_then(|d| d.uuid().ok());
        match by_uuid {
            Some(uuid) => vec![("CUDA_VISIBLE_DEVICES".into(), uuid)],
            None => {
                let resolved = device
                    .resolve_visible(self.inherited_visible.as_deref())
                    .unwrap_or_else(|_| device.clone());
                vec![
                    (
                        "CUDA_VISIBLE_DEVICES".into(),
                        resolved.cuda_visible_devices(),
                    ),
                    ("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into()),
                ]
            }
        }
    }
}

fn drv(e: result::DriverError) -> DeviceError {
    let name = e
        .error_name()
        .ok()
        .and_then(|c| c.to_str().ok().map(str::to_string))
        .unwrap_or_else(|| format!("CUDA error {}", e.0 as i32));
    let text = e
        .error_string()
        .ok()
        .and_then(|c| c.to_str().ok().map(str::to_string))
        .unwrap_or_default();
    let msg = if text.is_empty() {
        name
    } else {
        format!("{name}: {text}")
    };
    if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        DeviceError::OutOfMemory(msg)
    } else {
        DeviceError::Driver(msg)
    }
}

/// A module load that failed, with what the JIT compiler logged (up to its first NUL).
fn jit_failure(error: DeviceError, log: &[u8]) -> DeviceError {
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let text = String::from_utf8_lossy(&log[..end]);
    let text = text.trim();
    let what = format!(
        "the driver could not load the probe's PTX (.target {}, PTX ISA {})",
        kernels::PTX_TARGET,
        kernels::PTX_ISA
    );
    let with = |msg: String| {
        if text.is_empty() {
            format!("{what}: {msg}")
        } else {
            format!("{what}: {msg}; JIT log: {text}")
        }
    };
    match error {
        DeviceError::OutOfMemory(msg) => DeviceError::OutOfMemory(with(msg)),
        DeviceError::Driver(msg) => DeviceError::Driver(with(msg)),
        DeviceError::Unavailable(msg) => DeviceError::Unavailable(with(msg)),
    }
}

fn usize_of(bytes: u64) -> Result<usize, DeviceError> {
    usize::try_from(bytes).map_err(|_| DeviceError::OutOfMemory(format!("{bytes} bytes")))
}

/// A pointer to one kernel argument, as `cuLaunchKernel` wants it.
fn arg<T>(value: &mut T) -> *mut c_void {
    (value as *mut T).cast()
}

/// One worker's context: the primary context of its device 0, the probe module, and its buffers.
pub struct CudaSession {
    dev: sys::CUdevice,
    ctx_retained: bool,
    module: Option<sys::CUmodule>,
    functions: BTreeMap<&'static str, sys::CUfunction>,
    buffers: BTreeMap<u64, (sys::CUdeviceptr, u64)>,
    next: u64,
    scratch: Option<sys::CUdeviceptr>,
    /// The two events every timed call records around its work.
    events: Option<(sys::CUevent, sys::CUevent)>,
    sms: u32,
    identity: WorkerDevice,
}

impl CudaSession {
    pub fn open(nvml: Option<&Nvml>) -> Result<CudaSession, DeviceError> {
        driver_present().map_err(|e| DeviceError::Unavailable(e.to_string()))?;
        result::init().map_err(drv)?;
        let dev = result::device::get(0).map_err(drv)?;
        let mut s = CudaSession {
            dev,
            ctx_retained: false,
            module: None,
            functions: BTreeMap::new(),
            buffers: BTreeMap::new(),
            next: 1,
            scratch: None,
            events: None,
            sms: 1,
            identity: WorkerDevice::default(),
        };
        // SAFETY: `dev` came from `device::get`; the retained context is released in `Drop`.
        let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(drv)?;
        s.ctx_retained = true;
        // SAFETY: a context just retained for this device.
        unsafe { result::ctx::set_current(ctx) }.map_err(drv)?;
        s.identity = identify(dev, nvml)?;
        // SAFETY: plain attribute query of a valid device.
        let sms = unsafe {
            result::device::get_attribute(
                dev,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
        }
        .map_err(drv)?;
        s.sms = u32::try_from(sms).unwrap_or(1).max(1);
        s.load_module()?;
        let scratch_bytes = (u64::from(s.sms) * 8 * u64::from(kernels::BLOCK) * 4)
            .max(u64::from(s.sms) * 2 * 8)
            .max(8);
        // SAFETY: allocation in the current context; freed in `Drop`.
        s.scratch = Some(unsafe { result::malloc_sync(usize_of(scratch_bytes)?) }.map_err(drv)?);
        let event = || result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(drv);
        let start = event()?;
        // Kept before the second create, so that `Drop` destroys the first if the second fails.
        s.events = Some((start, start));
        s.events = Some((start, event()?));
        Ok(s)
    }

    /// Loads the embedded PTX with the driver's module loader, which JIT-compiles it for this device; on
    /// failure the error carries the JIT compiler's log.
    fn load_module(&mut self) -> Result<(), DeviceError> {
        let mut log = vec![0u8; JIT_LOG_BYTES];
        let mut options = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // The size travels in the pointer-sized slot itself, as the driver API defines for integer options.
        let mut values: [*mut c_void; 2] = [
            log.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(JIT_LOG_BYTES),
        ];
        let mut raw = std::mem::MaybeUninit::<sys::CUmodule>::uninit();
        // SAFETY: `PTX` is a NUL-terminated PTX image; `options` and `values` have the same length, and the
        // log buffer outlives the call and is as long as its size option says. The module is unloaded in
        // `Drop`.
        let module = unsafe {
            sys::cuModuleLoadDataEx(
                raw.as_mut_ptr(),
                kernels::PTX.as_ptr().cast(),
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
            .result()
            .map(|()| raw.assume_init())
        }
        .map_err(|e| jit_failure(drv(e), &log))?;
        self.module = Some(module);
        for name in kernels::ENTRY_POINTS {
            let c = CString::new(name).map_err(|e| DeviceError::Driver(e.to_string()))?;
            // SAFETY: `module` is loaded and alive.
            let f = unsafe { result::module::get_function(module, c) }.map_err(drv)?;
            self.functions.insert(name, f);
        }
        Ok(())
    }

    fn function(&self, name: &'static str) -> Result<sys::CUfunction, DeviceError> {
        self.functions
            .get(name)
            .copied()
            .ok_or_else(|| DeviceError::Driver(format!("kernel {name} not loaded")))
    }

    fn scratch(&self) -> Result<sys::CUdeviceptr, DeviceError> {
        self.scratch
            .ok_or_else(|| DeviceError::Driver("no scratch buffer".into()))
    }

    fn buffer(&self, b: BufferId) -> Result<(sys::CUdeviceptr, u64), DeviceError> {
        self.buffers
            .get(&b.0)
            .copied()
            .ok_or_else(|| DeviceError::Driver("no such buffer".into()))
    }

    /// Launches on the legacy default stream; the caller synchronises.
    fn launch(
        &self,
        name: &'static str,
        grid: u32,
        block: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), DeviceError> {
        let f = self.function(name)?;
        // SAFETY: `f` belongs to the loaded module; `params` point to live values of the kernel's
        // parameter types, and every caller synchronises before those values go out of scope.
        unsafe {
            result::launch_kernel(
                f,
                (grid, 1, 1),
                (block, 1, 1),
                0,
                std::ptr::null_mut(),
                params,
            )
        }
        .map_err(drv)
    }

    fn sync(&self) -> Result<(), DeviceError> {
        result::ctx::synchronize().map_err(drv)
    }

    /// Runs `launch` between two events on the legacy default stream and waits for it: the time between
    /// the events as the GPU stamped them (CUDA Driver API, cuEventElapsedTime: "resolution of around
    /// 0.5 microseconds"; the NULL stream, so no other stream's work falls between them), and the time
    /// from before the first record to the end of the wait on this thread.
    fn timed(
        &self,
        launch: impl FnOnce() -> Result<(), DeviceError>,
    ) -> Result<Timing, DeviceError> {
        let (start, end) = self
            .events
            .ok_or_else(|| DeviceError::Driver("no events".into()))?;
        let t = Instant::now();
        // SAFETY: both events were created by this session in the current context; the null stream is
        // the context's legacy default stream.
        unsafe { result::event::record(start, std::ptr::null_mut()) }.map_err(drv)?;
        launch()?;
        // SAFETY: as above.
        unsafe { result::event::record(end, std::ptr::null_mut()) }.map_err(drv)?;
        self.sync()?;
        let host = t.elapsed();
        // SAFETY: both events were recorded on the same stream and have completed (synchronised).
        let ms = unsafe { result::event::elapsed(start, end) }.map_err(drv)?;
        Ok(Timing {
            gpu: Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3),
            host,
        })
    }

    fn grid(&self, per_sm: u32) -> u32 {
        self.sms.saturating_mul(per_sm).max(1)
    }
}

fn identify(dev: sys::CUdevice, nvml: Option<&Nvml>) -> Result<WorkerDevice, DeviceError> {
    let name = result::device::get_name(dev).map_err(drv)?;
    let mut raw = std::mem::MaybeUninit::<sys::CUuuid>::uninit();
    // SAFETY: `raw` is written by the driver before it is read.
    let uuid = unsafe {
        sys::cuDeviceGetUuid_v2(raw.as_mut_ptr(), dev)
            .result()
            .map_err(drv)?;
        raw.assume_init()
    };
    let bytes: [u8; 16] = uuid.bytes.map(|b| b as u8);
    let hex = format_uuid(&bytes);
    // SAFETY: plain queries of a valid device.
    let (total, major, minor) = unsafe {
        (
            result::device::total_mem(dev).map_err(drv)?,
            result::device::get_attribute(
                dev,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            )
            .map_err(drv)?,
            result::device::get_attribute(
                dev,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            )
            .map_err(drv)?,
        )
    };
    let mut identity = WorkerDevice {
        name,
        uuid: hex.clone(),
        parent_uuid: None,
        mig: false,
        memory_mib: total as u64 / MIB,
        compute_capability: format!("{major}.{minor}"),
    };
    if let Some(nvml) = nvml {
        for prefix in ["GPU-", "MIG-"] {
            if let Ok(d) = nvml.device_by_uuid(format!("{prefix}{hex}").as_str()) {
                identity.uuid = format!("{prefix}{hex}");
                identity.mig = d.mig_is_mig_device_handle().unwrap_or(prefix == "MIG-");
                if identity.mig {
                    identity.parent_uuid = d.mig_parent_device().and_then(|p| p.uuid()).ok();
                }
                break;
            }
        }
    }
    Ok(identity)
}

fn pattern_args(pattern: Pattern) -> (u64, u32) {
    match pattern {
        Pattern::Constant(v) => (v, 0),
        Pattern::Sequence(seed) => (seed, 1),
    }
}

impl GpuSession for CudaSession {
    fn identity(&self) -> WorkerDevice {
        self.identity.clone()
    }

    fn mem_info(&mut self) -> Result<(u64, u64), DeviceError> {
        let (free, total) = result::mem_get_info().map_err(drv)?;
        Ok((free as u64, total as u64))
    }

    fn alloc(&mut self, bytes: u64) -> Result<BufferId, DeviceError> {
        // SAFETY: allocation in the current context; freed by `free` or `Drop`.
        let ptr = unsafe { result::malloc_sync(usize_of(bytes)?) }.map_err(drv)?;
        let id = self.next;
        self.next += 1;
        self.buffers.insert(id, (ptr, bytes));
        Ok(BufferId(id))
    }

    fn free(&mut self, buffer: BufferId) -> Result<(), DeviceError> {
        let (ptr, _) = self
            .buffers
            .remove(&buffer.0)
            .ok_or_else(|| DeviceError::Driver("no such buffer".into()))?;
        // SAFETY: `ptr` was allocated by this session and is freed once.
        unsafe { result::free_sync(ptr) }.map_err(drv)
    }

    fn fill(&mut self, buffer: BufferId, pattern: Pattern) -> Result<(), DeviceError> {
        let (mut ptr, bytes) = self.buffer(buffer)?;
        let mut n = bytes / 8;
        let (mut seed, mut mode) = pattern_args(pattern);
        let mut params = [arg(&mut ptr), arg(&mut n), arg(&mut seed), arg(&mut mode)];
        self.launch(kernels::FILL, self.grid(8), kernels::BLOCK, &mut params)?;
        self.sync()
    }

    fn count(&mut self, buffer: BufferId, pattern: Pattern) -> Result<u64, DeviceError> {
        let (mut ptr, bytes) = self.buffer(buffer)?;
        let mut matches = self.scratch()?;
        // SAFETY: the scratch buffer holds at least 8 bytes.
        unsafe { result::memset_d8_sync(matches, 0, 8) }.map_err(drv)?;
        let mut n = bytes / 8;
        let (mut seed, mut mode) = pattern_args(pattern);
        let mut params = [
            arg(&mut ptr),
            arg(&mut n),
            arg(&mut seed),
            arg(&mut mode),
            arg(&mut matches),
        ];
        self.launch(kernels::COUNT, self.grid(8), kernels::BLOCK, &mut params)?;
        self.sync()?;
        let mut out = [0u64; 1];
        // SAFETY: reads the 8 bytes the kernel wrote.
        unsafe { result::memcpy_dtoh_sync(&mut out, matches) }.map_err(drv)?;
        Ok(out[0])
    }

    fn short_kernel(&mut self, iters: u32) -> Result<Timing, DeviceError> {
        let mut out = self.scratch()?;
        let mut iters = iters;
        let mut params = [arg(&mut out), arg(&mut iters)];
        self.timed(|| self.launch(kernels::WORK, 1, 32, &mut params))
    }

    fn work(&mut self, iters: u32, kernels_n: u32) -> Result<Duration, DeviceError> {
        let mut out = self.scratch()?;
        let mut iters = iters;
        let mut params = [arg(&mut out), arg(&mut iters)];
        let t = Instant::now();
        for _ in 0..kernels_n {
            self.launch(kernels::WORK, self.grid(8), kernels::BLOCK, &mut params)?;
        }
        self.sync()?;
        Ok(t.elapsed())
    }

    fn hog(&mut self, kernel_ns: u64, kernels_n: u32) -> Result<(), DeviceError> {
        let mut out = self.scratch()?;
        let mut ns = kernel_ns;
        let mut params = [arg(&mut out), arg(&mut ns)];
        for _ in 0..kernels_n {
            self.launch(kernels::SPIN, self.grid(2), kernels::HOG_BLOCK, &mut params)?;
        }
        self.sync()
    }

    fn copy(&mut self, src: BufferId, dst: BufferId, passes: u32) -> Result<Timing, DeviceError> {
        let (mut s, sb) = self.buffer(src)?;
        let (mut d, db) = self.buffer(dst)?;
        let mut n = sb.min(db) / 8;
        let mut params = [arg(&mut s), arg(&mut d), arg(&mut n)];
        self.timed(|| {
            for _ in 0..passes {
                self.launch(kernels::COPY, self.grid(8), kernels::BLOCK, &mut params)?;
            }
            Ok(())
        })
    }

    fn fault(&mut self) -> Result<(), DeviceError> {
        let mut bad = INVALID_ADDRESS;
        let mut params = [arg(&mut bad)];
        self.launch(kernels::FAULT, 1, 1, &mut params)?;
        self.sync()
    }
}

impl Drop for CudaSession {
    fn drop(&mut self) {
        // After a fault these calls fail; the driver frees everything at process exit regardless.
        for (_, (ptr, _)) in std::mem::take(&mut self.buffers) {
            // SAFETY: allocated by this session, freed once.
            let _ = unsafe { result::free_sync(ptr) };
        }
        if let Some(ptr) = self.scratch.take() {
            // SAFETY: as above.
            let _ = unsafe { result::free_sync(ptr) };
        }
        if let Some((start, end)) = self.events.take() {
            for event in if start == end {
                vec![start]
            } else {
                vec![start, end]
            } {
                // SAFETY: created by this session, destroyed once.
                let _ = unsafe { result::event::destroy(event) };
            }
        }
        if let Some(module) = self.module.take() {
            // SAFETY: loaded by this session, unloaded once; its functions are not used after this.
            let _ = unsafe { result::module::unload(module) };
        }
        if self.ctx_retained {
            // SAFETY: balances the retain in `open`.
            let _ = unsafe { result::primary_ctx::release(self.dev) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_module_load_names_the_ptx_and_carries_the_jit_log() {
        let mut log = b"ptxas application ptx input, line 12; error : Unknown symbol\n".to_vec();
        log.resize(JIT_LOG_BYTES, 0);
        let e = jit_failure(
            DeviceError::Driver("CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed".into()),
            &log,
        );
        assert_eq!(
            e,
            DeviceError::Driver(
                "the driver could not load the probe's PTX (.target sm_70, PTX ISA 6.0): \
                 CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed; JIT log: ptxas application \
                 ptx input, line 12; error : Unknown symbol"
                    .into()
            )
        );
    }

    #[test]
    fn an_empty_jit_log_is_left_out_and_out_of_memory_stays_out_of_memory() {
        let e = jit_failure(
            DeviceError::OutOfMemory("CUDA_ERROR_OUT_OF_MEMORY: out of memory".into()),
            &[0u8; 16],
        );
        assert!(e.is_out_of_memory());
        assert_eq!(
            e.to_string(),
            "the driver could not load the probe's PTX (.target sm_70, PTX ISA 6.0): \
             CUDA_ERROR_OUT_OF_MEMORY: out of memory"
        );
    }
}
