"""Shared behaviour of metrics that run a model: which model, is it available, load it lazily.

The model is named by an option (`model`: preset key, hub id or local path; None = the metric's
default). Its `ModelSpec.to_manifest()` is part of the signature, computed without loading weights,
so a repeated request is answered from the run store before any model is touched.

Metrics whose options have an `adapter` field take a debiasing adapter (Sun et al. 2022 §3.2; models/adapters.py)
by id: the model is then the backbone with that adapter attached, and the adapter's id, weights hash and
configuration join the signature. Without an adapter the signature is exactly what it was before adapters existed
(no `adapter` key), so stored runs keep their keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from fairness_core.metrics.base import Metric, MetricOptions

if TYPE_CHECKING:  # fairness_core.models imports torch: keep it out of CLI start-up
    from fairness_core.models.interfaces import ModelBase


class ModelMetric(Metric):
    """A metric whose options include `model`; subclasses set `task` and `default_model`."""

    #: model task for `resolve_model`; "lm" = seq2seq or decoder-only, decided from the model's config
    task: ClassVar[str] = "encoder"
    default_model: ClassVar[str] = ""

    def __init__(self, options: MetricOptions | None = None, *, model: ModelBase | None = None) -> None:
        """`model` injects an already-loaded model (tests, the page's alignment view)."""
        super().__init__(options)
        self._model = model

    @property
    def model_id(self) -> str:
        return getattr(self.options, "model", None) or self.default_model

    @property
    def adapter_id(self) -> str | None:
        """The debiasing adapter's id (option `adapter`), None for the plain backbone."""
        return getattr(self.options, "adapter", None) or None

    def adapter_info(self) -> Any:
        """The adapter's header (`models.adapters.AdapterInfo`), checked against this metric's backbone; raises
        MetricOptionError in one sentence for an unknown id or an adapter of another backbone."""
        from fairness_core.metrics.base import MetricOptionError
        from fairness_core.models.adapters import AdapterError, check_backbone, read_adapter
        from fairness_core.models.interfaces import ModelUnavailableError

        try:
            info = read_adapter(str(self.adapter_id))
            check_backbone(info, self.model_spec(), self.model_id)
        except (AdapterError, ModelUnavailableError) as error:  # the latter: a backbone of another kind (task)
            raise MetricOptionError(f"{self.name}: {error}") from None
        return info

    def model_spec(self) -> Any:
        from fairness_core.models import resolve_model
        from fairness_core.models.presets import lm_task

        task = lm_task(self.model_id) if self.task == "lm" else self.task
        return resolve_model(self.model_id, task)

    def model_manifest(self) -> dict[str, Any]:
        if self._model is not None:
            return dict(self._model.describe())
        return self.model_spec().to_manifest()

    def signature(self) -> dict[str, Any]:
        signature = super().signature() | {"model": self.model_manifest()}
        if "adapter" in signature["options"] and signature["options"]["adapter"] is None:
            del signature["options"]["adapter"]  # runs of the plain backbone keep the keys they always had
        if self.adapter_id:
            described = self.adapter_info().describe()
            signature["adapter"] = {"id": described["id"], "sha256": described["sha256"],
                                    "config": described["adapter"]}
        return signature

    def validate(self) -> None:
        super().validate()
        if self.adapter_id:
            self.adapter_info()

    @property
    def model(self) -> Any:
        """The model, loaded through the process-wide cache on first use (with its adapter, if one is named)."""
        if self._model is None:
            if self.adapter_id:
                from fairness_core.metrics.base import MetricOptionError
                from fairness_core.models.adapters import AdapterError, load_adapted

                try:
                    self._model = load_adapted(self.model_spec(), self.adapter_id)
                except AdapterError as error:
                    raise MetricOptionError(f"{self.name}: {error}") from None
            else:
                from fairness_core.models import load_model

                self._model = load_model(self.model_spec())
        return self._model

    def check_available(self) -> None:
        from fairness_core.models.interfaces import ModelUnavailableError
        from fairness_core.models.presets import availability, find_preset

        if self._model is not None:
            return
        preset = find_preset(self.model_id)
        if preset is not None:
            found = availability(preset)
            if not found.usable:
                raise ModelUnavailableError(f"{self.label} needs {preset.label}, which is "
                                            f"unavailable here: {found.reason}.")
            return
        spec = self.model_spec()  # raises for an unknown architecture offline
        if not spec.is_local:
            from fairness_core.models.presets import hub_reachable
            from fairness_core.models.spec import hub_cached_revision

            if hub_cached_revision(spec.source) is None and not hub_reachable():
                raise ModelUnavailableError(f"{self.label} needs {self.model_id}, which is unavailable here: not in "
                                            "the local Hugging Face cache and the hub cannot be reached.")
