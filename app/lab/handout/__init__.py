"""The lesson handout: every step of the guided lesson as one offline HTML file.

`steps` holds the lesson's steps as run configurations (the same settings as
static/js/lesson/steps.js), `pictures` computes each step's picture and numbers with the
real FFN, `render` writes the HTML (Plotly inlined once, print CSS for a PDF).
"""
