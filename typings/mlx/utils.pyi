from collections.abc import Callable
from typing import Any

# Without `destination` the result is always the list form (the dict form is not used).
def tree_flatten(
    tree: Any, prefix: str = "", is_leaf: Callable[[Any], bool] | None = None
) -> list[tuple[str, Any]]: ...
