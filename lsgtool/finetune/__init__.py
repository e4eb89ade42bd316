"""Training data and (in progress) training for ``lsgtool finetune``: gap-sentence generation first."""
