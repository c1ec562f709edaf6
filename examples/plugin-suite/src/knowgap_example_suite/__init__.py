"""An example knowgap plugin package: the ``refund-desk`` suite and the ``constant:`` model provider."""

from knowgap_example_suite.provider import ConstantModel, make_constant_model
from knowgap_example_suite.suite import RefundDeskSuite

__all__ = ["ConstantModel", "RefundDeskSuite", "make_constant_model"]
