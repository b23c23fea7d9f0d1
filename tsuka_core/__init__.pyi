# The public API of tsuka_core, listed once: tsuka_core/__init__.py loads each name from here on first use.
# docs/api.md lists the same names under the same headings (kept in this order, not sorted); tsuka_core.testing
# is the plugin authors' test kit.
# ruff: noqa: I001

# Every plugin: the contract's vocabulary, the hook markers, the errors.
from .errors import BackendError as BackendError
from .errors import PluginError as PluginError
from .errors import RequestError as RequestError
from .errors import StoreError as StoreError
from .errors import SuiteError as SuiteError
from .errors import TsukaError as TsukaError
from .plugins.hookspecs import HOOKSPEC_VERSION as HOOKSPEC_VERSION
from .plugins.hookspecs import RegisterBackend as RegisterBackend
from .plugins.hookspecs import RegisterCheckType as RegisterCheckType
from .plugins.hookspecs import RegisterScorecard as RegisterScorecard
from .plugins.hookspecs import RegisterToolEnvironment as RegisterToolEnvironment
from .plugins.hookspecs import RegisterSuite as RegisterSuite
from .plugins.hookspecs import hookimpl as hookimpl
from .terms import CATEGORIES as CATEGORIES
from .terms import EFFORTS as EFFORTS
from .terms import TIERS as TIERS
from .terms import Effort as Effort

# Check authors.
from .judge.answer import Answer as Answer
from .judge.answer import ToolCall as ToolCall
from .judge.checks import ArgParams as ArgParams
from .judge.checks import CheckParams as CheckParams
from .judge.checks import CheckType as CheckType
from .judge.checks import Count as Count
from .judge.checks import NoParams as NoParams
from .judge.checks import PathParams as PathParams
from .judge.checks import RegexParams as RegexParams
from .suite.testfile import build_check as build_check
from .judge.checks import first_call_argument as first_call_argument
from .judge.checks import json_at_path as json_at_path
from .judge.jsontools import MISSING as MISSING
from .judge.jsontools import ExtractedJson as ExtractedJson
from .judge.jsontools import JsonPath as JsonPath
from .judge.jsontools import extract_json as extract_json
from .judge.jsontools import json_equal as json_equal
from .judge.jsontools import json_type_name as json_type_name
from .judge.outcome import Outcome as Outcome
from .judge.patterns import Pattern as Pattern
from .judge.patterns import PatternTimeout as PatternTimeout
from .judge.schemas import schema_validator as schema_validator

# Backend authors.
from .backends.base import Backend as Backend
from .backends.base import BackendConfig as BackendConfig
from .backends.base import ChatRequest as ChatRequest
from .backends.base import ChatResponse as ChatResponse
from .backends.base import EffortRejected as EffortRejected
from .backends.base import ServerFacts as ServerFacts
from .backends.base import estimate_tokens as estimate_tokens
from .backends.base import run_seed as run_seed
from .backends.http import JsonReply as JsonReply
from .backends.http import StatusError as StatusError
from .backends.http import request_json as request_json
from .judge.answer import normalise_tool_call as normalise_tool_call
from .judge.answer import parse_arguments as parse_arguments
from .judge.answer import strip_reasoning as strip_reasoning
from .urls import redact_url as redact_url
from .urls import url_secrets as url_secrets

# Suite authors.
from .suite.loading import load_suite as load_suite
from .suite.loading import resolve_suite as resolve_suite
from .suite.loading import suite_hash as suite_hash
from .suite.model import Suite as Suite
from .suite.selection import Selection as Selection
from .judge.scorecard import JudgedCheck as JudgedCheck
from .judge.scorecard import JudgedTest as JudgedTest
from .judge.scorecard import Scorecard as Scorecard
from .judge.scorecard import ScoreRow as ScoreRow
from .judge.scorecard import mean_figure as mean_figure
from .record.figures import Figure as Figure
from .judge.environment import ToolEnvironment as ToolEnvironment
from .judge.environment import TurnState as TurnState

# Embedding tsuka in a program.
from .engine.sweep import QuietObserver as QuietObserver
from .engine.sweep import SweepObserver as SweepObserver
from .gating.allowlist import allowed_tools as allowed_tools
from .gating.allowlist import gate_tools as gate_tools
from .plugins.registry import Registry as Registry
from .plugins.registry import load_registry as load_registry
from .run.session import RunOptions as RunOptions
from .run.session import RunReport as RunReport
from .run.session import run_benchmark as run_benchmark
from .storage.store import ProfileStore as ProfileStore
