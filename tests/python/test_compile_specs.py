"""Compile-spec generation: the six keys, their defaults and encodings, and refusals carrying the C parser's message."""

import dataclasses
import inspect

import pytest

import gpuu
from gpuu.export_api import SHARED_KEYS


def as_dict(specs):
    return {s.key: s.value for s in specs}


def test_keys_are_the_rfc_six_in_order():
    assert SHARED_KEYS == ("gpu_shared_context_token", "gpu_shared_context_mode", "gpu_shared_sync_mode",
                           "gpu_shared_group_id", "gpu_shared_min_partition_size", "gpu_shared_prefer")
    assert [s.key for s in gpuu.make_shared_gpu_compile_specs()] == list(SHARED_KEYS)


def test_defaults_follow_the_rfc():
    assert as_dict(gpuu.make_shared_gpu_compile_specs()) == {
        "gpu_shared_context_token": b"default",
        "gpu_shared_context_mode": b"lookup_or_create",
        "gpu_shared_sync_mode": b"timeline",
        "gpu_shared_group_id": b"0",
        "gpu_shared_min_partition_size": b"3",
        "gpu_shared_prefer": b"auto",
    }


def test_defaults_are_read_from_the_c_init_functions():
    spec = gpuu.gpuu_c.gpuu_shared_spec()
    gpuu.gpuu_c.gpuu_shared_spec_init(spec)
    c_defaults = {"token": spec.token, "group_id": spec.group_id, "mode": gpuu.gpuu_c.gpuu_context_mode_name(spec.mode),
                  "sync_mode": gpuu.gpuu_c.gpuu_sync_mode_name(spec.sync_mode),
                  "min_partition_size": spec.min_partition_size, "prefer": gpuu.gpuu_c.gpuu_prefer_name(spec.prefer)}
    defaults = gpuu.export_api.SHARED_SPEC_DEFAULTS
    assert {k: getattr(defaults, k) for k in c_defaults} == c_defaults
    signature = inspect.signature(gpuu.make_shared_gpu_compile_specs)
    assert {k: signature.parameters[k].default for k in c_defaults} == c_defaults
    fields = {f.name: f.default for f in dataclasses.fields(gpuu.UnifiedGpuCompileSpec)}
    assert {"token": fields["shared_context_token"], "group_id": fields["shared_group_id"],
            "mode": fields["shared_context_mode"], "sync_mode": fields["shared_sync_mode"],
            "min_partition_size": fields["min_partition_size"], "prefer": fields["prefer"]} == c_defaults
    # None leaves the C init's value in the option structs the package fills.
    write = gpuu.core.program_write_options()
    assert (write.token, write.group_id, write.mode, write.sync_mode) == (
        spec.token, spec.group_id, spec.mode, spec.sync_mode)


def test_rfc_example_values_are_encoded_as_text_and_decimal():
    specs = gpuu.make_shared_gpu_compile_specs(token="scene0", mode="lookup_or_create", sync_mode="timeline",
                                               group_id=2, min_partition_size=3, prefer="vgf_first")
    assert as_dict(specs) == {
        "gpu_shared_context_token": b"scene0",
        "gpu_shared_context_mode": b"lookup_or_create",
        "gpu_shared_sync_mode": b"timeline",
        "gpu_shared_group_id": b"2",
        "gpu_shared_min_partition_size": b"3",
        "gpu_shared_prefer": b"vgf_first",
    }
    assert all(isinstance(s, gpuu.CompileSpec) and isinstance(s.value, bytes) for s in specs)


def test_utf8_token_round_trips_through_the_c_parser():
    specs = gpuu.make_shared_gpu_compile_specs(token="szene-\u00fc")
    assert as_dict(specs)["gpu_shared_context_token"] == "szene-\u00fc".encode("utf-8")
    assert gpuu.parse_shared_compile_specs(specs).token == "szene-\u00fc"


@pytest.mark.parametrize("mode", ["disabled", "lookup_only", "lookup_or_create", "create_only"])
@pytest.mark.parametrize("sync_mode", ["timeline", "queue_wait_idle", "none"])
def test_every_mode_and_sync_mode_parses_back(mode, sync_mode):
    parsed = gpuu.parse_shared_compile_specs(gpuu.make_shared_gpu_compile_specs(mode=mode, sync_mode=sync_mode))
    assert (parsed.mode, parsed.sync_mode, parsed.present) == (mode, sync_mode, True)


@pytest.mark.parametrize("prefer", ["auto", "vgf_first", "vulkan_first"])
def test_every_prefer_parses_back(prefer):
    assert gpuu.parse_shared_compile_specs(gpuu.make_shared_gpu_compile_specs(prefer=prefer)).prefer == prefer


def test_parse_of_no_specs_gives_defaults_not_present():
    parsed = gpuu.parse_shared_compile_specs([])
    assert parsed == gpuu.SharedGpuSpec(token="default", group_id=0, mode="lookup_or_create", sync_mode="timeline",
                                        min_partition_size=3, prefer="auto", present=False)


def test_keys_of_other_backends_are_ignored():
    parsed = gpuu.parse_shared_compile_specs([("vgf_tosa_spec", b"TOSA-1.0+FP"), ("gpu_shared_group_id", b"5")])
    assert parsed.group_id == 5 and parsed.present


def test_load_time_overrides_win_over_the_specs():
    specs = gpuu.make_shared_gpu_compile_specs(token="file", group_id=1, mode="lookup_only")
    parsed = gpuu.parse_shared_compile_specs(specs, token="app", group_id=9, mode="create_only", sync_mode="none")
    assert (parsed.token, parsed.group_id, parsed.mode, parsed.sync_mode) == ("app", 9, "create_only", "none")


@pytest.mark.parametrize("kwargs, key, fragment", [
    ({"mode": "lookup_sometimes"}, "gpu_shared_context_mode", "lookup_sometimes"),
    ({"sync_mode": "fence"}, "gpu_shared_sync_mode", "fence"),
    ({"prefer": "cpu_first"}, "gpu_shared_prefer", "cpu_first"),
    ({"token": ""}, "gpu_shared_context_token", ""),
    ({"group_id": "seven"}, "gpu_shared_group_id", "seven"),
    ({"min_partition_size": "3x"}, "gpu_shared_min_partition_size", "3x"),
])
def test_invalid_values_raise_with_the_c_message(kwargs, key, fragment):
    with pytest.raises(gpuu.InvalidArgumentError) as info:
        gpuu.make_shared_gpu_compile_specs(**kwargs)
    message = str(info.value)
    assert key in message, message
    assert fragment in message, message
    assert info.value.status == 1 and info.value.message == message


def test_out_of_range_integers_are_refused_by_the_parser():
    with pytest.raises(gpuu.InvalidArgumentError, match="gpu_shared_min_partition_size"):
        gpuu.make_shared_gpu_compile_specs(min_partition_size=0)
    with pytest.raises(gpuu.InvalidArgumentError, match="gpu_shared_group_id"):
        gpuu.make_shared_gpu_compile_specs(group_id=2 ** 70)


def test_unknown_shared_key_and_repeats_are_refused():
    with pytest.raises(gpuu.InvalidArgumentError, match="gpu_shared_colour"):
        gpuu.parse_shared_compile_specs([("gpu_shared_colour", b"blue")])
    with pytest.raises(gpuu.InvalidArgumentError, match="gpu_shared_prefer"):
        gpuu.parse_shared_compile_specs([("gpu_shared_prefer", b"auto"), ("gpu_shared_prefer", b"vgf_first")])


def test_bool_values_are_a_type_error():
    with pytest.raises(TypeError, match="bool"):
        gpuu.make_shared_gpu_compile_specs(group_id=True)


def test_unified_spec_has_the_rfc_fields_and_defaults():
    fields = {f.name: f for f in dataclasses.fields(gpuu.UnifiedGpuCompileSpec)}
    assert list(fields) == ["vgf", "vulkan_compile_options", "shared_context_token", "shared_context_mode",
                            "shared_sync_mode", "shared_group_id", "min_partition_size", "prefer",
                            "extra_shared_compile_specs", "backend_compile_specs"]
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec())
    assert gpuu.UnifiedGpuCompileSpec() == spec  # the VGF backend's options default to its defaults
    assert (spec.vulkan_compile_options, spec.shared_context_token, spec.shared_context_mode, spec.shared_sync_mode,
            spec.shared_group_id, spec.min_partition_size, spec.prefer, spec.extra_shared_compile_specs) == (
        None, "default", "lookup_or_create", "timeline", 0, 3, "auto", ())
    assert spec.shared_compile_specs() == gpuu.make_shared_gpu_compile_specs()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.prefer = "vgf_first"


def test_unified_spec_appends_extra_specs_and_validates_at_construction():
    extra = gpuu.CompileSpec("vgf_debug", b"1")
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), shared_group_id=7, prefer="vgf_first",
                                      extra_shared_compile_specs=(extra,))
    specs = spec.shared_compile_specs()
    assert specs[-1] == extra and as_dict(specs[:6])["gpu_shared_group_id"] == b"7"
    with pytest.raises(gpuu.InvalidArgumentError, match="gpu_shared_sync_mode"):
        gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), shared_sync_mode="eventually")
    with pytest.raises(gpuu.InvalidArgumentError, match="gpu_shared_prefer"):  # a repeat of one of the six
        gpuu.UnifiedGpuCompileSpec(vgf=None, extra_shared_compile_specs=(gpuu.CompileSpec("gpu_shared_prefer",
                                                                                          b"auto"),))


def test_vgf_compile_spec_checks_its_tosa_profile():
    assert gpuu.VgfCompileSpec().profiles == ("FP", "INT")
    assert gpuu.VgfCompileSpec("TOSA-1.0+FP").profiles == ("FP",)
    with pytest.raises(gpuu.InvalidArgumentError, match="TOSA 1.0"):
        gpuu.VgfCompileSpec("TOSA-0.80+BI")
    with pytest.raises(gpuu.InvalidArgumentError, match="MT"):
        gpuu.VgfCompileSpec("TOSA-1.0+MT")
    with pytest.raises(gpuu.InvalidArgumentError, match="form"):
        gpuu.VgfCompileSpec("tosa")


def test_vulkan_compile_options_reject_unknown_keys():
    with pytest.raises(gpuu.InvalidArgumentError, match="texture_storage"):
        gpuu.UnifiedGpuCompileSpec(vgf=None, vulkan_compile_options={"texture_storage": True})
