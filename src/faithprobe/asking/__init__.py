"""How a question is asked: the requests a QA question becomes and how its answer is read
back, from a causal LM (:mod:`~faithprobe.asking.qa_questions`) or an answer-kind head
(:mod:`~faithprobe.asking.yes_no_head`)."""
