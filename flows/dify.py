"""Dify's External Knowledge API on `kbflow serve`: POST /retrieval.

Dify (api/services/external_knowledge_service.py) posts, with `Authorization: Bearer <key>`,

    {"knowledge_id": "…", "query": "…",
     "retrieval_setting": {"top_k": 5, "score_threshold": 0.0},
     "metadata_condition": null | {"logical_operator": "and", "conditions": [
         {"name": "…", "comparison_operator": "is", "value": "…"}]}}

and reads `records` from a 200 answer, each `{content, score, title, metadata}`; `metadata`
must be an object (Dify writes score and title into it). On registration it posts no body at
all and calls 403 a bad key and 404 a wrong endpoint, so a bodiless request gets 400.

The key decides tenant and groups (the keys file of flows/api.py), never the body.
`knowledge_id` is the key's tenant: kbflow's unit of access is a tenant (with the documents it
inherits from its parents) and the key's groups, so one Dify knowledge base = one key's view.
Any other id, another tenant's included, is "knowledge does not exist" (2001): an id alone
must not tell a caller which tenants exist. Errors have Dify's shape,
`{"error_code": …, "error_msg": …}`: 1001 malformed Authorization header, 1002 unknown key
(both 403, as Dify reads them), 2001 unknown knowledge (404); kbflow adds 3001 for a request
it refuses (400) and 5001 when the server cannot search now (503).

`score` is the result's calibrated probability of answering, capped by the scores above it
so Dify's sorting keeps kbflow's order (kbflow_integrations.evidence.scored). A
`no_answer` verdict returns `{"records": []}`. metadata_condition: `as_of` (is, =) and
`group` (is, in) are kbflow's search filters; `doc_id`, `tenant_id`, `authority`,
`clause_no` filter the results (is, is not, in, not in, start with, contains, empty,
not empty) over a deeper search. Other names or operators are refused, as is `or` across a
search filter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import date
from typing import Annotated, Any, Literal, Protocol

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from flows.serving import read_capped
from kbflow_integrations.evidence import citation, conflict_sides, scored, title

MAX_K = 100  # as /search and `kbflow search --k`
MAX_QUERY_CHARS = 1000
MAX_BODY_BYTES = 64 * 1024
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
DEEPER = 5  # a result filter searches this many times top_k, so filtering leaves enough
SEARCH_FIELDS = {"as_of": ("is", "="), "group": ("is", "in")}
RESULT_OPERATORS = ("is", "is not", "in", "not in", "start with", "contains", "empty",
                    "not empty")
RESULT_FIELDS = ("doc_id", "tenant_id", "authority", "clause_no")
Text = Annotated[str, StringConstraints(max_length=256)]


class Grant(Protocol):
    tenant: str
    groups: list[str]


class Keys(Protocol):
    """flows.api.KeyRing: the grant of a key, HTTPException 401 (or 503) otherwise."""

    def grant(self, authorization: str | None) -> Grant: ...


class Searches(Protocol):
    """flows.api.SearchService: the response's JSON, None when the caller left."""

    async def search(self, request: Request, query: str, tenant: str, groups: list[str],
                     as_of: date, k: int) -> str | None: ...


class DifyError(Exception):
    """An answer in Dify's error shape."""

    def __init__(self, status: int, code: int, message: str,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers

    def response(self) -> JSONResponse:
        return JSONResponse({"error_code": self.code, "error_msg": self.message},
                            status_code=self.status, headers=self.headers)


class Condition(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Text
    comparison_operator: Text
    value: Text | int | float | list[Text | int | float] | None = None


class MetadataCondition(BaseModel):
    model_config = ConfigDict(extra="forbid")
    logical_operator: Literal["and", "or"] | None = "and"
    conditions: list[Condition] | None = Field(None, max_length=50)


class RetrievalSetting(BaseModel):
    top_k: int | None = Field(None, ge=1, le=MAX_K)  # Dify sends null when none is set
    score_threshold: float | None = Field(None, ge=0, le=1)


class RetrievalRequest(BaseModel):
    """Dify's body; fields a later Dify adds are ignored (they cannot widen the key)."""

    knowledge_id: str = Field(min_length=1, max_length=256)
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    retrieval_setting: RetrievalSetting = Field(default_factory=RetrievalSetting)
    metadata_condition: MetadataCondition | None = None


class Plan(BaseModel):
    """What a metadata_condition asks of kbflow: search filters and result filters."""

    as_of: date | None = None
    groups: list[str] | None = None
    any_of: bool = False  # the result filters combine with `or`
    tests: list[tuple[str, str, Any]] = Field(default_factory=list)


def plan(condition: MetadataCondition | None) -> Plan:
    """The filters a metadata_condition names; a DifyError (3001) for anything else."""
    found = Plan()
    conditions = (condition.conditions if condition else None) or []
    found.any_of = condition is not None and condition.logical_operator == "or"
    for c in conditions:
        op = c.comparison_operator
        if c.name in SEARCH_FIELDS:
            if op not in SEARCH_FIELDS[c.name]:
                raise _refused(f"{c.name} takes {' or '.join(SEARCH_FIELDS[c.name])}, not {op!r}")
            if found.any_of and len(conditions) > 1:
                raise _refused(f"{c.name} is a search filter: it combines with 'and' only")
            if c.name == "as_of":
                found.as_of = _day(c.value)
            else:
                found.groups = _strings(c.name, c.value, allow_one=True)
        elif c.name in RESULT_FIELDS:
            if op not in RESULT_OPERATORS:
                raise _refused(f"unsupported comparison_operator {op!r} (supported for "
                               f"{c.name}: {', '.join(RESULT_OPERATORS)})")
            if op in ("empty", "not empty"):
                value: Any = None
            elif op in ("in", "not in"):
                value = _strings(c.name, c.value, allow_one=False)
            elif isinstance(c.value, str) and c.value:
                value = c.value
            else:
                raise _refused(f"{c.name} {op} needs a non-empty string value")
            found.tests.append((c.name, op, value))
        else:
            raise _refused(f"unknown metadata field {c.name!r} (known: "
                           f"{', '.join([*SEARCH_FIELDS, *RESULT_FIELDS])})")
    return found


def _refused(message: str) -> DifyError:
    return DifyError(400, 3001, f"metadata_condition: {message}")


def _day(value: object) -> date:
    if isinstance(value, str) and DAY.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise _refused("as_of must be a date written YYYY-MM-DD")


def _strings(name: str, value: object, *, allow_one: bool) -> list[str]:
    if allow_one and isinstance(value, str) and value:
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return [str(v) for v in value]
    raise _refused(f"{name} needs a list of non-empty strings")


MATCH: dict[str, Callable[[str | None, Any], bool]] = {
    "is": lambda have, want: have == want,
    "is not": lambda have, want: have != want,
    "in": lambda have, want: have in want,
    "not in": lambda have, want: have not in want,
    "start with": lambda have, want: have is not None and have.startswith(want),
    "contains": lambda have, want: have is not None and want in have,
    "empty": lambda have, _: not have,
    "not empty": lambda have, _: bool(have),
}


def kept(result: dict, found: Plan) -> bool:
    if not found.tests:
        return True
    hits = (MATCH[op](result.get(name), value) for name, op, value in found.tests)
    return any(hits) if found.any_of else all(hits)


def records(response: dict, found: Plan, top_k: int, threshold: float) -> list[dict]:
    """The search response as Dify's records: kept, above the threshold, top_k of them."""
    if response["verdict"] == "no_answer":
        return []
    sides = conflict_sides(response)
    out = []
    for r, score in scored(response):
        if kept(r, found) and score >= threshold:
            out.append({"content": r["text"], "score": score, "title": title(r),
                        "metadata": citation(r, response, sides)})
        if len(out) == top_k:
            break
    return out


def dify_router(keys: Keys, service: Searches) -> APIRouter:
    """POST /retrieval, authorised by the keys of /search (flows/api.py mounts it)."""
    router = APIRouter()

    @router.post("/retrieval")
    async def retrieval(request: Request) -> Response:
        try:
            return await _retrieve(request, keys, service)
        except DifyError as exc:
            return exc.response()

    return router


async def _retrieve(request: Request, keys: Keys, service: Searches) -> Response:
    header = request.headers.get("authorization") or ""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise DifyError(403, 1001, "Invalid Authorization header format. Expected "
                                   "'Bearer <api-key>' format.")
    try:
        grant = keys.grant(header)
    except HTTPException as exc:
        if exc.status_code == 401:
            raise DifyError(403, 1002, "Authorization failed") from None
        raise DifyError(503, 5001, str(exc.detail)) from None
    raw = await read_capped(request, MAX_BODY_BYTES)
    if raw is None:
        raise DifyError(413, 3001, f"body over {MAX_BODY_BYTES} bytes")
    try:
        body = RetrievalRequest.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise DifyError(400, 3001, f"{where}: {first['msg']}") from None
    if body.knowledge_id != grant.tenant:
        raise DifyError(404, 2001, "The knowledge does not exist")
    found = plan(body.metadata_condition)
    if found.groups and not set(found.groups) <= set(grant.groups):
        raise _refused("this API key does not grant those groups")  # narrower only
    groups = sorted(set(found.groups or grant.groups))
    top_k = body.retrieval_setting.top_k or 5
    depth = min(MAX_K, top_k * DEEPER) if found.tests else top_k
    try:
        answer = await service.search(request, body.query, grant.tenant, groups,
                                      found.as_of or date.today(), depth)
    except HTTPException as exc:  # 503: too many searches waiting
        raise DifyError(exc.status_code, 5001, str(exc.detail), exc.headers) from None
    if answer is None:  # the caller left
        return Response(status_code=499)
    threshold = body.retrieval_setting.score_threshold or 0.0
    return JSONResponse({"records": records(json.loads(answer), found, top_k, threshold)})
