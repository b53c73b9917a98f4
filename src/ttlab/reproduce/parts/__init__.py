"""The parts of ``ttlab reproduce``: one module per part, named as the part, each holding its run function
(registered with :func:`ttlab.reproduce.registry.register_part`), its claim builder ``claims(r)``, its report section
``render(r)`` and its cost estimate; what several parts share lives in the ``common_*`` modules.

Importing this package registers every part. The import order below is the registration order, which is the order
of :data:`ttlab.reproduce.PARTS` (``ttlab reproduce --list``, the run and the report): do not let it be sorted.
"""

# isort: off
from ttlab.reproduce.parts import lm_data_scaling, lm_model_scaling, lm_suite_scaling, lm_id_ablations  # noqa: F401
from ttlab.reproduce.parts import model_scaling  # noqa: F401
from ttlab.reproduce.parts import ntp_figure2, ntp_ablations, ntp_generalization, ntp_svop, ntp_scale  # noqa: F401
from ttlab.reproduce.parts import id_accuracy, table1, manifold_regression  # noqa: F401
# isort: on
