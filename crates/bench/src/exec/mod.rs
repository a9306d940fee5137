//! Running a program under a placement matrix (being written).
