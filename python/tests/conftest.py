"""With NDCONV_TEST_INSTALLED=1 (CI: the wheel installed into a fresh
venv), the tests must run against the installed package, not the source
tree: ndconv must import from the running interpreter's prefix."""
import os
import sys

import ndconv


def pytest_report_header(config):
    return "ndconv %s from %s" % (ndconv.__version__, os.path.dirname(ndconv.__file__))


if os.environ.get("NDCONV_TEST_INSTALLED") == "1":
    where = os.path.realpath(ndconv.__file__)
    if not where.startswith(os.path.realpath(sys.prefix) + os.sep):
        raise RuntimeError("NDCONV_TEST_INSTALLED=1 but ndconv was imported from %s, not from the venv %s"
                           % (where, sys.prefix))
