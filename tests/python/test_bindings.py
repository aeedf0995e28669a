"""The SWIG layer and its Pythonic handles: errors as exceptions, handle lifetime, buffers, read-back, logging."""

import gc
import threading

import numpy as np
import pytest

import conftest
import gpuu
from gpuu import gpuu_c


def small_graph():
    """x f32[2,3] -> sin -> add(c) -> output."""
    g = gpuu.Graph()
    x = g.add_input("x", np.float32, [2, 3])
    c = g.add_constant("c", np.arange(6, dtype=np.float32).reshape(2, 3))
    s = g.add_node("sin", "sin_0", [x])[0]
    y = g.add_node("add", "add_0", [s, c])[0]
    g.mark_output(y)
    return g


def program_bytes(graph, prefer="vulkan_first", **spec):
    partitioner = gpuu.UnifiedGpuPartitioner(
        gpuu.UnifiedGpuCompileSpec(vgf=None, prefer=prefer, min_partition_size=1, **spec))
    return partitioner.write_program(partitioner.partition(graph))


def test_version_matches_the_header():
    assert gpuu.version() == gpuu.__version__ == "%d.%d.%d" % (
        gpuu_c.GPUU_VERSION_MAJOR, gpuu_c.GPUU_VERSION_MINOR, gpuu_c.GPUU_VERSION_PATCH)
    assert gpuu_c.gpuu_version() >> 22 == gpuu_c.GPUU_VERSION_MAJOR


def test_every_status_has_its_exception_class():
    for status, cls in gpuu.ERROR_CLASSES.items():
        assert issubclass(cls, gpuu.GpuuError)
        assert cls.status == status
        assert cls.status_name == gpuu_c.gpuu_status_string(status)
    assert issubclass(gpuu.InvalidArgumentError, ValueError)
    assert issubclass(gpuu.DeviceLostError, gpuu.VulkanError)


def c_enum_values(prefix):
    """The values of one gpuu.h enum, from its SWIG constants (the FORCE32 value left out)."""
    return {getattr(gpuu_c, k) for k in dir(gpuu_c) if k.startswith(prefix) and not k.endswith("FORCE32")}


@pytest.mark.parametrize("table, name_of, from_name, prefix", [
    (gpuu.core.DTYPES, gpuu_c.gpuu_dtype_name, gpuu_c.gpuu_dtype_from_name, "GPUU_DTYPE_"),
    (gpuu.core.CONTEXT_MODES, gpuu_c.gpuu_context_mode_name, gpuu_c.gpuu_context_mode_from_name, "GPUU_CONTEXT_"),
    (gpuu.core.SYNC_MODES, gpuu_c.gpuu_sync_mode_name, gpuu_c.gpuu_sync_mode_from_name, "GPUU_SYNC_"),
    (gpuu.core.PREFER, gpuu_c.gpuu_prefer_name, gpuu_c.gpuu_prefer_from_name, "GPUU_PREFER_"),
    (gpuu.core.VGF_PATHS, gpuu_c.gpuu_vgf_path_name, gpuu_c.gpuu_vgf_path_from_name, "GPUU_VGF_PATH_"),
    (gpuu.core._LOG_LEVELS, gpuu_c.gpuu_log_level_name, gpuu_c.gpuu_log_level_from_name, "GPUU_LOG_"),
], ids=["dtype", "context_mode", "sync_mode", "prefer", "vgf_path", "log_level"])
def test_name_tables_are_the_c_abis(table, name_of, from_name, prefix):
    assert set(table.values()) == c_enum_values(prefix)  # every value of the C enum, and no other
    for name, value in table.items():
        assert name_of(value) == name
        assert from_name(name) == value
    assert name_of(max(table.values()) + 1) is None
    with pytest.raises(gpuu.InvalidArgumentError, match="unknown"):
        from_name("no such name")


def test_dtype_tables_cover_every_c_dtype():
    assert set(gpuu.core._NUMPY_BY_DTYPE) == set(gpuu.core.DTYPES.values())
    for name, code in gpuu.core.DTYPES.items():
        assert gpuu.core.dtype_name(code) == name


def test_error_classes_cover_every_c_status():
    assert set(gpuu.ERROR_CLASSES) == c_enum_values("GPUU_ERROR_")
    assert gpuu.InvalidArgumentError("x").status == gpuu_c.GPUU_ERROR_INVALID_ARGUMENT


def test_c_errors_arrive_as_exceptions_with_the_c_message():
    with gpuu.Graph() as g:
        with pytest.raises(gpuu.InvalidArgumentError) as info:
            g.add_node("no_such_op", "n0", [])
        assert "no_such_op" in str(info.value)
        assert info.value.message == gpuu_c.gpuu_last_error()
        assert info.value.status == gpuu_c.GPUU_ERROR_INVALID_ARGUMENT
        x = g.add_input("x", np.float32, [2, 2])
        with pytest.raises(gpuu.InvalidArgumentError, match="'scale'"):  # the node and the attribute at fault
            g.add_node("clamp", "clamp_0", [x], {"scale": 1.0})
        with pytest.raises(gpuu.InvalidArgumentError, match="must be float"):  # kinds are strict
            g.add_node("clamp", "clamp_0", [x], {"min": 0})
        with pytest.raises(gpuu.NotFoundError):
            g.find_value("nothing")


def test_a_refused_call_leaves_the_graph_usable():
    with gpuu.Graph() as g:
        x = g.add_input("x", np.float32, [2, 2])
        with pytest.raises(gpuu.InvalidArgumentError, match="x"):
            g.add_input("x", np.float32, [3])
        y = g.add_node("relu", "relu_0", [x])[0]
        g.mark_output(y)
        g.verify()
        assert g.value_count == 2 and g.node_count == 1


def test_io_and_format_errors_map_to_their_classes(tmp_path):
    with pytest.raises(gpuu.IoError) as info:
        gpuu.Program(path=str(tmp_path / "missing.gpuu"))
    assert "missing.gpuu" in str(info.value)
    with pytest.raises(gpuu.InvalidFormatError):
        gpuu.Program(data=b"\0" * 64)
    with small_graph() as g:
        data = program_bytes(g)
    with pytest.raises(gpuu.InvalidFormatError):
        gpuu.Program(data=data[: len(data) // 2])


def test_graph_read_back():
    with small_graph() as g:
        assert [n.name for n in g.nodes()] == ["sin_0", "add_0"]
        add = g.node(g.node_id("add_0"))
        assert add.op == "add" and len(add.inputs) == 2 and len(add.outputs) == 1
        assert g.value_name(add.outputs[0]) == "add_0:0"
        assert g.value_shape(add.outputs[0]) == (2, 3)
        assert g.value_dtype(add.outputs[0]) == gpuu_c.GPUU_DTYPE_F32
        assert g.inputs == [g.find_value("x")]
        assert g.outputs == [add.outputs[0]]
        assert g.value_is_constant(g.find_value("c")) and g.value_producer(g.find_value("c")) == -1
        assert g.value_producer(add.outputs[0]) == add.id
    assert "conv2d" in gpuu.op_names() and "custom_shader" in gpuu.op_names()


def test_attributes_of_every_kind_pass_through():
    with gpuu.Graph() as g:
        x = g.add_input("x", np.float32, [1, 2, 4, 4])
        p = g.add_node("avg_pool2d", "pool", [x], {"kernel": [2, 2], "ceil_mode": 0})[0]
        assert g.value_shape(p) == (1, 2, 2, 2)
        c = g.add_node("clamp", "clamp", [p], {"min": -0.5, "max": 0.5})[0]
        gl = g.add_node("gelu", "gelu", [c], {"approximate": "tanh"})[0]
        t = g.add_node("transpose", "t", [gl], {"perm": [0, 2, 3, 1]})[0]
        assert g.value_shape(t) == (1, 2, 2, 2)
        ln = g.add_node("layer_norm", "ln", [t, None, None], {"normalized_ndim": 1, "eps": 1e-6})[0]
        assert g.value_shape(ln) == (1, 2, 2, 2)


def test_constants_accept_any_numpy_layout():
    with gpuu.Graph() as g:
        strided = np.arange(12, dtype=np.float32).reshape(3, 4).T  # not C-contiguous
        c = g.add_constant("c", strided)
        assert g.value_shape(c) == (4, 3)
        i = g.add_constant("i", np.array([1, 2], dtype=np.int64))
        assert g.value_dtype(i) == gpuu_c.GPUU_DTYPE_I64
        with pytest.raises(gpuu.InvalidArgumentError, match="uint16"):
            g.add_constant("d", np.zeros(3, dtype=np.uint16))


def test_handles_are_released_once_and_closed_objects_refuse_use():
    g = small_graph()
    g.close()
    g.close()
    with pytest.raises(ValueError, match="closed"):
        g.add_input("y", np.float32, [1])
    # Garbage collection releases too (no leak checker here: this must simply not crash).
    for _ in range(50):
        small_graph()
    gc.collect()


def test_session_round_trip_without_copies_and_with_checks():
    with small_graph() as g:
        data = program_bytes(g)
    with gpuu.Program(data=data) as program:
        assert program.delegates == ["VulkanBackend"]
        with gpuu.Session(program) as session:
            assert [(i.name, i.shape) for i in session.inputs] == [("x", (2, 3))]
            x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
            session.set_input(0, x)
            session.execute()
            out = np.full((2, 3), np.nan, dtype=np.float32)
            assert session.get_output(0, out) is out  # written in place
            np.testing.assert_allclose(out, np.sin(x) + np.arange(6).reshape(2, 3), rtol=1e-6, atol=1e-6)
            with pytest.raises(gpuu.InvalidArgumentError, match="shape"):
                session.set_input(0, np.zeros((3, 2), np.float32))
            with pytest.raises(gpuu.InvalidArgumentError, match="f32"):
                session.set_input(0, np.zeros((2, 3), np.float64))
            # The raw binding checks sizes too (the C side names the input and both sizes).
            with pytest.raises(gpuu.InvalidArgumentError, match="x"):
                gpuu_c.gpuu_session_set_input(session.handle, 0, b"\0" * 8)
            with pytest.raises(BufferError):  # output buffers must be writable
                gpuu_c.gpuu_session_get_output(session.handle, 0, bytes(24))


def test_execute_before_setting_inputs_is_a_failed_precondition():
    with small_graph() as g:
        data = program_bytes(g)
    with gpuu.Program(data=data) as program, gpuu.Session(program) as session:
        with pytest.raises(gpuu.FailedPreconditionError):
            session.execute()


def test_lookup_only_without_a_context_is_not_found():
    with small_graph() as g:
        data = program_bytes(g, shared_context_token="nobody_registered_this", shared_context_mode="lookup_only")
    with gpuu.Program(data=data) as program:
        with pytest.raises(gpuu.NotFoundError) as info:
            gpuu.Session(program)
        assert "nobody_registered_this" in str(info.value)


def test_sessions_share_the_context_of_their_token():
    with small_graph() as g:
        data = program_bytes(g, shared_context_token="python_shared", shared_group_id=3)
    with gpuu.Program(data=data) as program, gpuu.Session(program) as a, gpuu.Session(program) as b:
        with a.context() as ca, b.context() as cb, gpuu.Context.lookup("python_shared", 3) as registered:
            assert ca.token == "python_shared" and ca.group_id == 3
            assert ca.device_name == cb.device_name == registered.device_name
            assert ca.vulkan_handles().device == registered.vulkan_handles().device
    gpuu.Context.unregister("python_shared", 3)
    with pytest.raises(gpuu.NotFoundError):
        gpuu.Context.lookup("python_shared", 3)


def test_runtime_overrides_reach_the_session(tmp_path):
    path = tmp_path / "p.gpuu"
    with small_graph() as g:
        path.write_bytes(program_bytes(g))
    with gpuu.load(path, token="python_override", group_id=11, sync_mode="queue_wait_idle") as program:
        assert program.sync_mode == "queue_wait_idle"
        with program.context() as ctx:
            assert (ctx.token, ctx.group_id) == ("python_override", 11)
        with pytest.raises(ValueError, match="1 input"):
            program.run([])
    gpuu.Context.unregister("python_override", 11)
    with pytest.raises(gpuu.InvalidArgumentError, match="sync mode"):
        gpuu.load(path, sync_mode="sometimes")


def test_log_callback_receives_messages_from_any_thread():
    seen = []

    def log(level, component, message):
        seen.append((level, component, message))
        conftest._log(level, component, message)  # the validation check still sees everything

    gpuu.set_log_callback(log, "info")
    try:
        with small_graph() as g:
            data = program_bytes(g, shared_context_token="python_logging")
        errors = []

        def run():
            try:
                with gpuu.Program(data=data) as program, gpuu.Session(program) as s:
                    s.set_input(0, np.zeros((2, 3), np.float32))
                    s.execute()
            except Exception as e:  # reported below: an exception in a thread would be lost
                errors.append(e)

        threads = [threading.Thread(target=run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
    finally:
        gpuu.set_log_callback(conftest._log, "warn")
    gpuu.Context.unregister("python_logging", 0)
    assert seen, "no log message at info level from creating a context and two sessions"
    assert all(isinstance(c, str) and isinstance(m, str) for _, c, m in seen)


def test_an_application_device_registers_under_its_own_key():
    # The handles of a context gpuu made stand in for an application's own device.
    with gpuu.Context.resolve("python_app_source", 0) as source:
        h = source.vulkan_handles()
        desc = gpuu_c.gpuu_external_context_desc()
        gpuu_c.gpuu_external_context_desc_init(desc)
        desc.token, desc.group_id = "python_app_device", 5
        desc.instance, desc.physical_device, desc.device = h.instance, h.physical_device, h.device
        desc.queue, desc.queue_family_index = h.queue, h.queue_family_index
        desc.ownership = gpuu_c.GPUU_OWN_NOTHING
        with gpuu.Context(gpuu_c.gpuu_context_register_external(desc)) as registered:
            assert registered.device_name == source.device_name
            with pytest.raises(gpuu.AlreadyExistsError, match="python_app_device"):
                gpuu_c.gpuu_context_register_external(desc)
            with gpuu.Context.lookup("python_app_device", 5) as found:
                assert found.vulkan_handles().device == h.device
        gpuu.Context.unregister("python_app_device", 5)
    gpuu.Context.unregister("python_app_source", 0)
    desc = gpuu_c.gpuu_external_context_desc()
    gpuu_c.gpuu_external_context_desc_init(desc)
    desc.token = "python_app_missing"
    with pytest.raises(gpuu.InvalidArgumentError):  # no handles at all
        gpuu_c.gpuu_context_register_external(desc)
