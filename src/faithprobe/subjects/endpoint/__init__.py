"""Models behind an OpenAI-compatible HTTP endpoint (``openai:``): the endpoint's settings
and the subject that asks it."""
