"""Prompts about nothing a memory store holds: general knowledge and everyday coding questions, the
kind a person asks an agent whatever project it works in. `memoria bench quality --floor` asks each
of them in every namespace of a benchmark; the relevance floor should leave most with no context.

Written for this purpose (not taken from any dataset), in the shapes real prompts have: questions,
requests, a few words of context. None names a person, place or thing of the benchmark corpora.
"""

from __future__ import annotations

UNRELATED_PROMPTS: tuple[str, ...] = (
    "what is a monad, in one paragraph?",
    "Explain the difference between a process and a thread.",
    "How do I reverse a list in Python without modifying the original?",
    "Write a regex that matches an IPv4 address.",
    "What does the CAP theorem say about distributed databases?",
    "Convert this function to use async/await instead of callbacks",
    "What is the time complexity of heapq.heappush?",
    "How do I undo the last git commit but keep the changes staged?",
    "Why does floating point addition give 0.30000000000000004 for 0.1 + 0.2?",
    "Give me a bash one-liner that counts lines in all .py files recursively",
    "What is the difference between TCP and UDP?",
    "Explain big-O notation to a beginner.",
    "How does garbage collection work in the JVM?",
    "What's the capital of Australia?",
    "Summarise the plot of Hamlet in three sentences.",
    "How many bytes are in a UTF-8 encoded emoji?",
    "What is the derivative of x^3 * sin(x)?",
    "Explain how HTTPS certificates are validated by a browser.",
    "What are Rust lifetimes for?",
    "How do I center a div horizontally and vertically with CSS flexbox?",
    "Write a SQL query that finds duplicate emails in a users table",
    "What is the difference between a left join and an inner join?",
    "Explain eventual consistency with an example.",
    "What does the `yield` keyword do in a Python generator?",
    "How do I set an environment variable permanently on Linux?",
    "What is a closure in JavaScript?",
    "Describe the visitor design pattern and when to use it.",
    "Why is my Docker image so large and how can I shrink it?",
    "What is the speed of light in a vacuum?",
    "How does a bloom filter work and what are its false positive rates?",
    "Explain the difference between merge and rebase in git.",
    "What is dependency injection?",
    "How do I parse command line arguments in Go?",
    "What causes a deadlock and how can it be prevented?",
    "Explain what a Kubernetes pod is.",
    "What is the Pythagorean theorem?",
    "Translate 'good morning, how are you' into French.",
    "What are the SOLID principles in object-oriented design?",
    "How does public key cryptography work, briefly?",
    "What's the difference between unit tests and integration tests?",
    "Please write a haiku about compilers.",
    "How do I read a CSV file with pandas and drop rows with missing values?",
)
