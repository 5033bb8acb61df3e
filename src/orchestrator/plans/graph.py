"""Task dependencies: ids that exist, no cycles, and the order a run takes."""

from __future__ import annotations

import heapq

from orchestrator.models import Plan, PlanError, Task


def check_ids(plan: Plan) -> None:
    """Task ids are the keys of run state: two tasks with one id would share a history."""
    seen: dict[str, Task] = {}
    for task in plan.tasks:
        first = seen.get(task.id)
        if first is not None:
            raise PlanError(
                f"duplicate task id {task.id} (first at line {first.line}); "
                "give each task a unique id",
                path=plan.path,
                line=task.line,
            )
        seen[task.id] = task


def check_dependencies(plan: Plan) -> None:
    ids = [t.id for t in plan.tasks]
    known = set(ids)
    for task in plan.tasks:
        for dep in task.depends_on:
            if dep not in known:
                shown = ", ".join(ids[:12]) + (", ..." if len(ids) > 12 else "")
                raise PlanError(
                    f"Task {task.id} depends on unknown task {dep}; use one of: {shown}",
                    path=plan.path,
                    line=task.line,
                )
    cycle = find_cycle(plan.tasks)
    if cycle:
        first = next(t for t in plan.tasks if t.id == cycle[0])
        raise PlanError(
            f"dependency cycle {' -> '.join(cycle)}; remove one of these dependencies",
            path=plan.path,
            line=first.line,
        )


def find_cycle(tasks: list[Task]) -> list[str] | None:
    """A cycle as ids, first id repeated at the end (`1.1 -> 1.2 -> 1.1`), or None.

    Iterative so that a plan with thousands of chained tasks cannot hit the recursion limit.
    """
    deps = {t.id: [d for d in t.depends_on] for t in tasks}
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    for root in deps:
        if root in state:
            continue
        path: list[str] = []
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0:
                state[node] = 1
                path.append(node)
            children = deps.get(node, [])
            if i < len(children):
                stack.append((node, i + 1))
                child = children[i]
                if state.get(child) == 1:
                    return [*path[path.index(child) :], child]
                if child not in state and child in deps:
                    stack.append((child, 0))
            else:
                state[node] = 2
                path.pop()
    return None


def order(plan: Plan) -> list[Task]:
    """Tasks in dependency order; among tasks that are ready, the one earlier in the file first.

    >>> from orchestrator.models import Plan, Task
    >>> p = Plan(path="p.md", format="milestone", tasks=[
    ...     Task(id="1", title="a", depends_on=["2"]), Task(id="2", title="b"), Task(id="3", title="c")])
    >>> [t.id for t in order(p)]
    ['2', '1', '3']
    """
    index = {t.id: i for i, t in enumerate(plan.tasks)}
    waiting = {t.id: len({d for d in t.depends_on if d in index}) for t in plan.tasks}
    dependents: dict[str, list[str]] = {t.id: [] for t in plan.tasks}
    for t in plan.tasks:
        for dep in dict.fromkeys(t.depends_on):
            if dep in index:
                dependents[dep].append(t.id)
    ready = [(index[i], i) for i, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    result: list[Task] = []
    while ready:
        _, task_id = heapq.heappop(ready)
        result.append(plan.tasks[index[task_id]])
        for child in dependents[task_id]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, (index[child], child))
    if len(result) < len(plan.tasks):
        check_dependencies(plan)  # raises with the cycle named
        raise PlanError("tasks cannot be ordered; check their dependencies", path=plan.path)
    return result
