"""A response set shared by the calculator and API tests, its figures worked by hand.

FA (2, -1), SR (1, 1), LC (0, -2), DP (-1, 0), RG (1, -1):
s = 0.75, 0, 0.5, -0.25, 0.5, so SHS 0.3, SHS100 65.0, band moderate;
c = 0.25, 0.5, -0.5, -0.25, 0, so SR and LC are flagged (|c| > 0.25).
"""

ANSWERS = {
    "q1": 2,
    "q2": -1,
    "q3": 1,
    "q4": 1,
    "q5": 0,
    "q6": -2,
    "q7": -1,
    "q8": 0,
    "q9": 1,
    "q10": -1,
}
