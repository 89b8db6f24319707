"""A job's State is its word wherever the word was: in SQLite, in a run file's JSON, as a dict key, in a sentence."""

import json
import sqlite3

from core.history.store import Store
from core.language.progress import status_words
from core.results import STATUSES
from core.results.states import ACTIVE, ENDED, State
from tests.sample_runs import make_result


def test_every_state_is_its_word_in_json_sql_dicts_and_sentences():
    for state in State:
        assert json.loads(json.dumps({"status": state})) == {"status": state.value}
        assert {state.value: 1}.get(state) == 1 and state in {state.value}
        assert f"{state}|{state:>12}" == f"{state.value}|{state.value:>12}"
        con = sqlite3.connect(":memory:")
        row = con.execute("SELECT ?, typeof(?)", (state, state)).fetchone()
        assert row == (state.value, "text")
        assert State(state.value) is state
    assert set(ACTIVE) | set(ENDED) == set(State) and not set(ACTIVE) & set(ENDED)
    assert set(STATUSES) == set(ENDED) | {State.RUNNING}


def test_a_run_stored_with_a_state_reads_back_as_that_state_and_the_page_words_it(tmp_path):
    with Store(tmp_path / "runs.sqlite3") as store:
        result = make_result(status=State.CANCELLED)
        store.finish(result)
        back = store.get(result.run_id)
    assert back.status == State.CANCELLED and type(back.status) is str
    assert status_words(back.status) == status_words(State.CANCELLED) == "stopped"
