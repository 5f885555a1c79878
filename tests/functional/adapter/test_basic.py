"""dbt-tests-adapter's base suites, as dbt-spark runs them, against `type: tablestream`."""

from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral


class TestSimpleMaterializationsTablestream(BaseSimpleMaterializations):
    pass


class TestSingularTestsTablestream(BaseSingularTests):
    pass


class TestSingularTestsEphemeralTablestream(BaseSingularTestsEphemeral):
    pass


class TestEmptyTablestream(BaseEmpty):
    pass


class TestEphemeralTablestream(BaseEphemeral):
    pass


class TestIncrementalTablestream(BaseIncremental):
    pass


class TestGenericTestsTablestream(BaseGenericTests):
    pass


class TestBaseAdapterMethodTablestream(BaseAdapterMethod):
    pass
