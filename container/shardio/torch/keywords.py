"""The keyword-style calls of 0.1.0 (`data_loader(location, batch_size, seed=1, cache_dir=...)`,
`channel_data_loader`, `ShardDataset(source, seed=1)`, `make_data_loader(dataset, 64, num_workers=4)`),
kept for one release with a DeprecationWarning: each keyword is routed by name to the field of
Source, S3Options or LoaderOptions that declares it, so that no option is declared here again."""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Dict, Optional, Tuple, Union

from ..epoch.options import LoaderOptions
from ..source.location import Source
from ..source.s3_dataset import S3Options

_NEW_STYLE = "data_loader(Source(location, ...), batch_size, LoaderOptions(...))"


def _names(kind: type) -> frozenset:
    return frozenset(field.name for field in dataclasses.fields(kind))


def _taken(keywords: Dict[str, Any], names: frozenset) -> Dict[str, Any]:
    return {name: value for name, value in keywords.items() if name in names}


def deprecated(call: str, instead: str) -> None:
    """The DeprecationWarning of a keyword-style call, pointing at the caller's line."""
    warnings.warn(f"{call} with keyword options is deprecated and is removed in the next release: {instead}",
                  DeprecationWarning, stacklevel=4)


def loader_options(call: str, options: Optional[LoaderOptions], keywords: Dict[str, Any]) -> LoaderOptions:
    """`options` (or the defaults) with the LoaderOptions `keywords` of a keyword-style call."""
    deprecated(f"{call}(...)", f"pass LoaderOptions(...) ({_NEW_STYLE})")
    unknown = set(keywords) - _names(LoaderOptions)
    if unknown:
        raise TypeError(f"{call}() got unexpected keyword arguments {', '.join(sorted(unknown))}: LoaderOptions has "
                        f"{', '.join(sorted(_names(LoaderOptions)))}")
    return dataclasses.replace(options or LoaderOptions(), **keywords)


def source_and_options(call: str, location: Union[Source, str], options: Optional[LoaderOptions],
                       keywords: Dict[str, Any]) -> Tuple[Source, LoaderOptions]:
    """The Source and LoaderOptions a keyword-style `data_loader`/`channel_data_loader` call names."""
    deprecated(f"{call}(location, batch_size, name=value, ...)", f"call {_NEW_STYLE}")
    source_names = _names(Source) - {"location", "s3"}
    s3_names, option_names = _names(S3Options), _names(LoaderOptions)
    unknown = set(keywords) - source_names - s3_names - option_names
    if unknown:
        raise TypeError(f"{call}() got unexpected keyword arguments {', '.join(sorted(unknown))}: Source has "
                        f"{', '.join(sorted(source_names | {'s3'}))}, S3Options {', '.join(sorted(s3_names))}, "
                        f"LoaderOptions {', '.join(sorted(option_names))}")
    of_source = _taken(keywords, source_names | s3_names)
    if isinstance(location, Source):
        if of_source:
            raise TypeError(f"{call}(Source(...), ...): give {', '.join(sorted(of_source))} in the Source")
        source = location
    else:
        source = Source(location, s3=S3Options(**_taken(keywords, s3_names)), **_taken(keywords, source_names))
    return source, dataclasses.replace(options or LoaderOptions(), **_taken(keywords, option_names))
