"""The opt-in tiers' tests in slices, one of which each CI run runs (CONTRIBUTING.md, "The opt-in
tiers in CI").

The soaks, the scenarios and the `changes_full` variants cannot all fit in CI's 60 minutes.
`.ci/run` runs `pytest -m 'extended or soak or scenarios or changes_full' --opt-in-slice <its
commit count>`: the extended tier whole, and one slice of the opt-in tests. The opt-in tests are
split into slices of about SLICE_SECONDS of one worker's time each, by their times in a slice
(OPT_IN_SECONDS; a test not measured yet counts UNMEASURED_SECONDS), and the commit count, modulo
the number of slices, picks one. Consecutive commits pick consecutive slices, so every opt-in test
runs within as many CI runs as there are slices. In a slice a property soak runs SLICE_EXAMPLES of
its examples, each from the run's new seed, so consecutive runs of it explore different histories;
`pytest -m soak` runs them all.
"""

from __future__ import annotations

import math
from typing import Protocol

OPT_IN_MARKERS = ("soak", "scenarios", "changes_full", "benches")
# A slice's share of CI's 60 minutes: one worker's seconds (the slice runs on two workers, beside
# the extended tier).
SLICE_SECONDS = 450
UNMEASURED_SECONDS = 120
# The examples a property soak runs in a slice (a soak's own count, 4 to 8, with `-m soak`): one,
# from the run's new seed, so each CI run still explores a history no run explored before.
SLICE_EXAMPLES = 1
# Each opt-in test's seconds on one worker in a slice: its time in the last full run of the tiers
# (its date and commit in CONTRIBUTING.md, "The opt-in tiers in CI"), a property soak's scaled to
# SLICE_EXAMPLES of its examples; a benchmark's, its --tiny test's seconds in a run of each alone at
# cd4b25e (2026-12-06), local_start's from bench/README.md, view's alone at d028654 (2026-12-07, a load
# average of 6 to 8 from other work). Refresh it after that run.
OPT_IN_SECONDS: dict[str, float] = {
    "tests/cluster/test_thrift_conformance.py::test_the_conformance_suite_passes_on_thrift": 661,
    "tests/functional/adapter/test_incremental.py::TestAppendOnSchemaChange::test_run_incremental_fail_on_schema_change": 10,
    "tests/functional/adapter/test_incremental.py::TestAppendOnSchemaChange::test_run_incremental_ignore": 76,
    "tests/functional/adapter/test_incremental.py::TestAppendOnSchemaChangeSpecialChars::test_incremental_append_new_columns_with_special_characters": 7,
    "tests/functional/adapter/test_incremental.py::TestBadStrategies::test_bad_strategies": 1,
    "tests/functional/adapter/test_incremental.py::TestDeltaInsertOverwrite::test_delta_strategies_overwrite": 6,
    "tests/functional/adapter/test_incremental.py::TestDeltaOnSchemaChange::test_run_incremental_append_new_columns": 27,
    "tests/functional/adapter/test_incremental.py::TestDeltaOnSchemaChange::test_run_incremental_sync_all_columns": 25,
    "tests/functional/adapter/test_incremental.py::TestDeltaStrategies::test_delta_strategies": 11,
    "tests/functional/adapter/test_incremental.py::TestIncrementalPredicatesMergeSpark::test__incremental_predicates": 5,
    "tests/functional/adapter/test_incremental.py::TestMergeExcludeColumns::test__merge_exclude_columns": 6,
    "tests/functional/adapter/test_incremental.py::TestMicrobatch::test_run_with_event_time": 16,
    "tests/functional/adapter/test_incremental.py::TestPredicatesMergeSpark::test__incremental_predicates": 5,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__bad_unique_key": 56,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__bad_unique_key_list": 7,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__duplicated_unary_unique_key_list": 11,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__empty_str_unique_key": 15,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__empty_unique_key_list": 30,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__no_unique_keys": 16,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__one_unique_key": 25,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__trinary_unique_key_list": 14,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__trinary_unique_key_list_no_update": 11,
    "tests/functional/adapter/test_incremental.py::TestUniqueKeySpark::test__unary_unique_key_list": 18,
    "tests/functional/adapter/test_snapshots.py::TestSnapshotCheckColsTablestream::test_snapshot_check_cols": 28,
    "tests/functional/adapter/test_snapshots.py::TestSnapshotNewRecordCheckModeTablestream::test_snapshot_new_record_mode": 25,
    "tests/functional/adapter/test_snapshots.py::TestSnapshotNewRecordDbtValidToCurrentTablestream::test_snapshot_new_record_mode": 8,
    "tests/functional/adapter/test_snapshots.py::TestSnapshotNewRecordTimestampModeTablestream::test_snapshot_new_record_mode": 26,
    "tests/functional/adapter/test_snapshots.py::TestSnapshotTimestampTablestream::test_snapshot_timestamp": 13,
    "tests/functional/adapter/test_store_test_failures.py::TestSparkStoreTestFailuresWithDelta::test_store_and_assert_failure_with_delta": 33,
    "tests/functional/adapter/test_store_test_failures.py::TestStoreTestFailuresAsExceptions::test_tests_run_unsuccessfully_and_raise_appropriate_exception": 2,
    "tests/functional/adapter/test_store_test_failures.py::TestStoreTestFailuresAsGeneric::test_tests_run_successfully_and_are_stored_as_expected": 4,
    "tests/functional/adapter/test_store_test_failures.py::TestStoreTestFailuresAsInteractions::test_tests_run_successfully_and_are_stored_as_expected": 10,
    "tests/functional/adapter/test_store_test_failures.py::TestStoreTestFailuresAsProjectLevelEphemeral::test_tests_run_successfully_and_are_stored_as_expected": 3,
    "tests/functional/adapter/test_store_test_failures.py::TestStoreTestFailuresAsProjectLevelOff::test_tests_run_successfully_and_are_stored_as_expected": 4,
    "tests/functional/adapter/test_store_test_failures.py::TestStoreTestFailuresAsProjectLevelView::test_tests_run_successfully_and_are_stored_as_expected": 3,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[aggregate]": 82,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[events]": 70,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[fresh_scale]": 136,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[history]": 60,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[local_start]": 171,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[log_read]": 52,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[long_run]": 56,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[mirror]": 56,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[pending]": 245,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[run]": 75,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[run_carryovers]": 88,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[run_changes]": 72,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[run_cold_only]": 318,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[run_scale]": 148,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[run_warehouse]": 84,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[small_window]": 500,
    "tests/functional/test_benchmarks.py::test_a_maintained_benchmark_runs_on_tiny_data_in_a_slice[view]": 734,
    "tests/functional/test_cdc_events.py::test_events_apply_by_sequence_late_and_duplicate_events_change_nothing": 28,
    "tests/functional/test_cdc_events.py::test_random_event_histories_soak[False]": 36,
    "tests/functional/test_cdc_events.py::test_random_event_histories_soak[True]": 36,
    "tests/functional/test_cdc_events.py::test_random_event_histories_with_crashes_soak[False]": 130,
    "tests/functional/test_cdc_events.py::test_random_event_histories_with_crashes_soak[True]": 156,
    "tests/functional/test_changes_read.py::test_the_five_commits_give_the_same_targets_through_changes_as_through_the_change_feed": 38,
    "tests/functional/test_delta_log_read.py::test_random_histories_read_from_the_delta_log_soak": 505,
    "tests/functional/test_history.py::test_every_change_is_a_version_and_deletes_close_them": 37,
    "tests/functional/test_history.py::test_random_histories_soak[False]": 32,
    "tests/functional/test_history.py::test_random_histories_soak[True]": 40,
    "tests/functional/test_history.py::test_random_histories_with_crashes_soak[False]": 152,
    "tests/functional/test_history.py::test_random_histories_with_crashes_soak[True]": 146,
    "tests/functional/test_integration_project.py::test_the_conformance_suite_passes_on_an_emulated_sql_warehouse": 395,
    "tests/functional/test_pyspark_matches_dbt.py::test_pyspark_and_dbt_soak": 128,
    "tests/functional/test_several_streams.py::test_a_union_and_a_join_commit_their_inputs_together_through_a_kill_at_each_step[other-steps]": 289,
    "tests/functional/test_several_streams.py::test_a_union_and_a_join_commit_their_inputs_together_through_a_kill_at_each_step[target-commit]": 87,
    "tests/functional/test_stream_merge.py::test_churny_keys_merge_to_the_source_state[changelog]": 17,
    "tests/functional/test_stream_merge.py::test_churny_keys_merge_to_the_source_state[table_changes]": 10,
    "tests/functional/test_stream_merge.py::test_keyed_table_stream_logs_net_changes[changelog]": 16,
    "tests/functional/test_stream_merge.py::test_kill_at_each_step_then_rerun_leaves_the_target_as_without_the_crash[changelog-offsets-append]": 63,
    "tests/functional/test_stream_merge.py::test_kill_at_each_step_then_rerun_leaves_the_target_as_without_the_crash[changelog-target-commit]": 112,
    "tests/functional/test_stream_merge.py::test_kill_at_each_step_then_rerun_leaves_the_target_as_without_the_crash[table_changes-offsets-append]": 58,
    "tests/functional/test_stream_merge.py::test_kill_at_each_step_then_rerun_leaves_the_target_as_without_the_crash[table_changes-target-commit]": 110,
    "tests/functional/test_stream_merge.py::test_merge_update_and_exclude_columns[changelog]": 16,
    "tests/functional/test_stream_merge.py::test_merge_update_and_exclude_columns[table_changes]": 16,
    "tests/functional/test_stream_merge.py::test_model_may_filter_join_and_compute_over_the_stream[changelog]": 11,
    "tests/functional/test_stream_merge.py::test_null_key_in_a_change_row_is_refused[changelog]": 7,
    "tests/functional/test_stream_merge.py::test_soft_and_ignored_deletes[changelog]": 25,
    "tests/functional/test_stream_merge.py::test_soft_and_ignored_deletes[table_changes]": 21,
    "tests/functional/test_stream_operations.py::test_vacuumed_source_is_refused_shown_stale_and_recovers[--full-refresh]": 11,
    "tests/functional/test_stream_properties.py::test_random_histories_soak[changelog-False]": 92,
    "tests/functional/test_stream_properties.py::test_random_histories_soak[table_changes-False]": 56,
    "tests/functional/test_stream_properties.py::test_random_histories_soak[table_changes-True]": 134,
    "tests/functional/test_stream_targets_dml.py::test_raw_dml_on_a_stream_target_behaves_as_on_plain_delta[current]": 21,
    "tests/functional/test_stream_targets_dml.py::test_raw_dml_on_a_stream_target_behaves_as_on_plain_delta[log]": 18,
    "tests/functional/test_stream_view.py::test_views_follow_their_inputs_through_updates_of_join_and_group_keys_and_deletes": 214,
    "tests/functional/test_stream_view_properties.py::test_random_histories_of_a_fact_and_its_dimensions_keep_every_view_equal_to_its_select": 288,
    "tests/functional/test_table_stream.py::test_a_dropped_target_after_a_full_refresh_is_rebuilt_in_a_new_epoch[changelog]": 19,
    "tests/functional/test_table_stream.py::test_a_dropped_target_after_a_full_refresh_is_rebuilt_in_a_new_epoch[table_changes]": 17,
    "tests/functional/test_table_stream.py::test_full_refresh_starts_a_new_epoch[changelog]": 12,
    "tests/functional/test_table_stream.py::test_kill_during_the_commit_protocol_applies_nothing_twice[changelog]": 95,
    "tests/functional/test_table_stream.py::test_kill_during_the_commit_protocol_applies_nothing_twice[table_changes]": 92,
    "tests/functional/test_table_stream.py::test_parse_compile_docs_show_and_a_failed_run_leave_the_offset_unchanged[changelog]": 14,
    "tests/functional/test_table_stream.py::test_ref_stream_chains_on_a_model_output[changelog]": 8,
    "tests/functional/test_table_stream.py::test_ref_stream_chains_on_a_model_output[table_changes]": 7,
    "tests/functional/test_table_stream.py::test_seed_append_only_case[changelog]": 28,
    "tests/functional/test_table_stream.py::test_seed_append_only_case[table_changes]": 26,
    "tests/functional/test_table_stream.py::test_seed_standard_case[changelog]": 18,
    "tests/functional/test_table_stream.py::test_start_at_earliest_reads_the_whole_change_feed[changelog]": 4,
    "tests/functional/test_table_stream.py::test_start_at_earliest_reads_the_whole_change_feed[table_changes]": 3,
    "tests/functional/test_table_stream.py::test_start_at_earliest_starts_where_the_feed_was_enabled[changelog]": 5,
    "tests/functional/test_table_stream.py::test_start_at_latest_skips_what_is_there[changelog]": 5,
    "tests/functional/test_table_stream.py::test_start_at_latest_skips_what_is_there[table_changes]": 5,
    "tests/functional/test_table_stream.py::test_start_at_snapshot_gives_insert_rows_of_the_current_state[changelog]": 7,
    "tests/functional/test_table_stream.py::test_start_at_snapshot_gives_insert_rows_of_the_current_state[table_changes]": 6,
    "tests/functional/test_table_stream.py::test_start_at_timestamp_resolves_to_the_last_version_at_or_before_it[changelog]": 5,
    "tests/functional/test_table_stream.py::test_start_at_version_reads_changes_after_it[changelog]": 4,
    "tests/functional/test_table_stream.py::test_start_at_version_reads_changes_after_it[table_changes]": 3,
    "tests/functional/test_table_stream.py::test_two_models_keep_independent_offsets[changelog]": 15,
    "tests/functional/test_table_stream.py::test_two_models_keep_independent_offsets[table_changes]": 11,
}

_in_slice = False
# The slice this process runs (its commit count in CI), None outside a slice.
_slice_number: int | None = None


class Item(Protocol):
    nodeid: str

    def get_closest_marker(self, name: str) -> object | None: ...


def enter_slice(number: int) -> None:
    """This process runs slice `number` (conftest's pytest_configure, in the controller and each worker)."""
    global _in_slice, _slice_number
    _in_slice = True
    _slice_number = number


def kill_steps_in_run(steps: list[str]) -> list[str]:
    """The commit protocol's steps a kill-at-every-step test kills at in this process: every one,
    or in a slice half of them, alternately the even and the odd positions by the slice's number,
    so two consecutive CI runs kill at every step (CONTRIBUTING.md, "The opt-in tiers in CI")."""
    if _slice_number is None:
        return list(steps)
    return steps[_slice_number % 2 :: 2]


def examples_in_run(examples: int) -> int:
    """A property test's examples in this process: its own, or at most SLICE_EXAMPLES in a slice."""
    return min(examples, SLICE_EXAMPLES) if _in_slice else examples


def is_opt_in(item: Item) -> bool:
    return any(item.get_closest_marker(marker) is not None for marker in OPT_IN_MARKERS)


def slices(items: list[Item]) -> list[list[Item]]:
    """The items in slices of about SLICE_SECONDS each, longest first into the lightest slice; the
    same items always give the same slices."""
    cost = {item.nodeid: OPT_IN_SECONDS.get(item.nodeid, UNMEASURED_SECONDS) for item in items}
    count = max(1, math.ceil(sum(cost.values()) / SLICE_SECONDS))
    bins: list[list[Item]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for item in sorted(items, key=lambda item: (-cost[item.nodeid], item.nodeid)):
        lightest = loads.index(min(loads))
        bins[lightest].append(item)
        loads[lightest] += cost[item.nodeid]
    return bins


def choose_slice(items: list[Item], chosen: int) -> tuple[list[Item], list[Item]]:
    """Every item that is not opt-in, with the opt-in items of slice `chosen` (modulo the number of
    slices); and the other opt-in items."""
    opt_in = [item for item in items if is_opt_in(item)]
    if not opt_in:
        return list(items), []
    every = slices(opt_in)
    names = {item.nodeid for item in every[chosen % len(every)]}
    kept = [item for item in items if not is_opt_in(item) or item.nodeid in names]
    dropped = [item for item in opt_in if item.nodeid not in names]
    return kept, dropped
